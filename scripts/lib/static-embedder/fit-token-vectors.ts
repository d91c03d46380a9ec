import type { TokenRows } from './token-rows.js';

export interface FitInput {
  rows: TokenRows;
  /** AᵀT: Σ over sentences of a[s][t] · teacher(s), a vocabulary × dimensions matrix. */
  rowsTimesTeacher: Float64Array;
  /** The starting vectors, also what the ridge term pulls towards (a token seen rarely keeps its own). */
  initial: Float64Array;
  vocabularySize: number;
  dimensions: number;
  /** Ridge strength, relative to the mean diagonal of AᵀA. */
  ridge: number;
  iterations: number;
  onIteration?: (iteration: number, relativeResidual: number) => void;
}

/**
 * Least squares with a ridge: E minimising ‖A·E − T‖² + λ‖E − E₀‖², A the sentences' mean-pooling
 * rows, T the teacher's vectors. The normal equations (AᵀA + λI)·E = AᵀT + λE₀ are solved by
 * conjugate gradients, one independent solve per dimension run side by side; AᵀA is never formed
 * (vocabulary² entries): each product goes through the sparse rows, two passes of their tokens.
 */
export function fitTokenVectors(input: FitInput): Float64Array {
  const { vocabularySize: v, dimensions: d } = input;
  const lambda = input.ridge * meanGramDiagonal(input.rows, v);
  const apply = (p: Float64Array, out: Float64Array) => gramTimes(input.rows, p, out, d, lambda);
  const x = Float64Array.from(input.initial);
  const b = new Float64Array(v * d);
  for (let i = 0; i < b.length; i++) b[i] = input.rowsTimesTeacher[i]! + lambda * input.initial[i]!;
  const r = new Float64Array(v * d);
  apply(x, r);
  for (let i = 0; i < r.length; i++) r[i] = b[i]! - r[i]!;
  const p = Float64Array.from(r);
  const q = new Float64Array(v * d);
  let rs = columnDots(r, r, v, d);
  const bNorm = Math.sqrt(columnDots(b, b, v, d).reduce((s, x) => s + x, 0)) || 1;
  for (let iteration = 1; iteration <= input.iterations; iteration++) {
    apply(p, q);
    const pq = columnDots(p, q, v, d);
    const alpha = rs.map((x, j) => (pq[j]! > 0 ? x / pq[j]! : 0));
    for (let t = 0; t < v; t++) {
      for (let j = 0; j < d; j++) {
        const i = t * d + j;
        x[i]! += alpha[j]! * p[i]!;
        r[i]! -= alpha[j]! * q[i]!;
      }
    }
    const next = columnDots(r, r, v, d);
    const beta = next.map((x, j) => (rs[j]! > 0 ? x / rs[j]! : 0));
    for (let t = 0; t < v; t++) for (let j = 0; j < d; j++) p[t * d + j] = r[t * d + j]! + beta[j]! * p[t * d + j]!;
    rs = next;
    input.onIteration?.(iteration, Math.sqrt(rs.reduce((s, x) => s + x, 0)) / bNorm);
  }
  return x;
}

/** out = (AᵀA + λI)·p, through the rows: y = a_s·p, then out += a_sᵀ·y. */
function gramTimes(rows: TokenRows, p: Float64Array, out: Float64Array, d: number, lambda: number): void {
  for (let i = 0; i < out.length; i++) out[i] = lambda * p[i]!;
  const y = new Float64Array(d);
  for (let s = 0; s + 1 < rows.offsets.length; s++) {
    const from = rows.offsets[s]!;
    const to = rows.offsets[s + 1]!;
    if (from === to) continue;
    y.fill(0);
    for (let k = from; k < to; k++) {
      const a = rows.shares[k]!;
      const offset = rows.ids[k]! * d;
      for (let j = 0; j < d; j++) y[j]! += a * p[offset + j]!;
    }
    for (let k = from; k < to; k++) {
      const a = rows.shares[k]!;
      const offset = rows.ids[k]! * d;
      for (let j = 0; j < d; j++) out[offset + j]! += a * y[j]!;
    }
  }
}

function columnDots(a: Float64Array, b: Float64Array, v: number, d: number): number[] {
  const out = new Array<number>(d).fill(0);
  for (let t = 0; t < v; t++) for (let j = 0; j < d; j++) out[j]! += a[t * d + j]! * b[t * d + j]!;
  return out;
}

function meanGramDiagonal(rows: TokenRows, v: number): number {
  let sum = 0;
  for (let k = 0; k < rows.shares.length; k++) sum += rows.shares[k]! ** 2;
  return sum / v || 1;
}

/** AᵀT, reading each sentence's teacher vector once through `teacherOf`. */
export function rowsTimesTeacher(
  rows: TokenRows,
  vocabularySize: number,
  dimensions: number,
  teacherOf: (sentence: number, out: Float32Array) => void,
): Float64Array {
  const out = new Float64Array(vocabularySize * dimensions);
  const vector = new Float32Array(dimensions);
  for (let s = 0; s + 1 < rows.offsets.length; s++) {
    teacherOf(s, vector);
    for (let k = rows.offsets[s]!; k < rows.offsets[s + 1]!; k++) {
      const a = rows.shares[k]!;
      const offset = rows.ids[k]! * dimensions;
      for (let j = 0; j < dimensions; j++) out[offset + j]! += a * vector[j]!;
    }
  }
  return out;
}
