// Adds two numbers.
export function add(a, b) {
  return a + b;
}

export const double = (x) => add(x, x);

export const comparer = {
  compare: (a, b) => a - b,
};
