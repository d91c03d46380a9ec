import { expect } from 'vitest';

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot / (Math.hypot(...a) * Math.hypot(...b));
}

export function expectUnitVectors(vectors: number[][], dimensions: number): void {
  for (const v of vectors) {
    expect(v).toHaveLength(dimensions);
    expect(v.every(Number.isFinite)).toBe(true);
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
  }
}

/** Largest absolute element-wise difference between two equally shaped lists of vectors. */
export function maxAbsDifference(a: number[][], b: number[][]): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  a.forEach((v, i) => {
    expect(v.length).toBe(b[i]!.length);
    v.forEach((x, j) => (max = Math.max(max, Math.abs(x - b[i]![j]!))));
  });
  return max;
}
