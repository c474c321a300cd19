import { Shape } from './types';

/** A circle. */
export class Circle implements Shape {
  constructor(private r: number) {}

  area(): number {
    return Math.PI * square(this.r);
  }

  #secret(): void {}
}

export function square(x: number): number {
  return x * x;
}

export const makeCircle = (r: number): Circle => new Circle(r);
