export interface Shape {
  area(): number;
}

export type Id = string;

export enum Color {
  Red,
  Blue,
}
