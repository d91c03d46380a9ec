import { seededRandom, shuffleInPlace } from './seeded-random.js';

/** A text as the model reads it: its tokens' rows in the table and their weights. */
export interface WeightedTokens {
  rows: Int32Array;
  weights: Float32Array;
}

/** Two texts that should lie close: the first is the query's side, the second the passage's. */
export type TokenPair = readonly [WeightedTokens, WeightedTokens];

export interface ContrastiveParameters {
  steps: number;
  /** Pairs a step; every other pair of the batch is a negative of each. */
  batch: number;
  learningRate: number;
  /** Cosines are multiplied by it before the softmax (1 / temperature). */
  scale: number;
  seed: number;
}

export interface ContrastiveInput {
  /** The token vectors, `dimensions` floats a row, updated in place. */
  rows: Float32Array;
  dimensions: number;
  pairs: TokenPair[];
  parameters: ContrastiveParameters;
  onStep?: (step: number, loss: number) => void;
}

/**
 * The second stage of the static model: its token vectors tuned so that a text's weighted mean
 * lies nearer the vector of the text it pairs with than those of the batch's other pairs (an
 * in-batch softmax over cosines, both directions, Adam). The distillation makes the student imitate
 * USE lite; this stage teaches it what a search wants, a sentence finding the passage it came from
 * and a message the reply it got, from text alone, with no labels of any benchmark.
 */
export function tuneContrastively(input: ContrastiveInput): void {
  const { rows, dimensions: d, pairs, parameters: p } = input;
  const usable = pairs.filter(([a, b]) => a.rows.length > 0 && b.rows.length > 0);
  if (usable.length < 2 || p.steps <= 0) return;
  const batchSize = Math.min(p.batch, usable.length);
  const random = seededRandom(p.seed);
  const order = shuffleInPlace([...usable], random);
  const left = new Float32Array(batchSize * d);
  const right = new Float32Array(batchSize * d);
  const leftNorms = new Float32Array(batchSize);
  const rightNorms = new Float32Array(batchSize);
  const logits = new Float32Array(batchSize * batchSize);
  const dLogits = new Float32Array(batchSize * batchSize);
  const gradient = new Float32Array(rows.length);
  const touched = new Uint8Array(rows.length / d);
  const adam = new AdamState(rows.length, p.learningRate);
  const dVector = new Float32Array(d);
  let cursor = 0;
  for (let step = 1; step <= p.steps; step++) {
    const batch: TokenPair[] = [];
    while (batch.length < batchSize) {
      if (cursor === order.length) shuffleInPlace(order, random), (cursor = 0);
      batch.push(order[cursor++]!);
    }
    batch.forEach(([a, b], k) => {
      leftNorms[k] = meanVector(rows, d, a, left, k * d);
      rightNorms[k] = meanVector(rows, d, b, right, k * d);
    });
    for (let i = 0; i < batchSize; i++) {
      for (let k = 0; k < batchSize; k++) logits[i * batchSize + k] = p.scale * dot(left, i * d, right, k * d, d);
    }
    dLogits.fill(0);
    const loss = (softmaxCrossEntropy(logits, dLogits, batchSize, 1, batchSize) + softmaxCrossEntropy(logits, dLogits, batchSize, batchSize, 1)) / 2;
    gradient.fill(0);
    touched.fill(0);
    for (const side of [0, 1] as const) {
      const own = side === 0 ? left : right;
      const other = side === 0 ? right : left;
      const norms = side === 0 ? leftNorms : rightNorms;
      for (let i = 0; i < batchSize; i++) {
        if (norms[i] === 0) continue;
        dVector.fill(0);
        for (let k = 0; k < batchSize; k++) {
          const g = p.scale * (side === 0 ? dLogits[i * batchSize + k]! : dLogits[k * batchSize + i]!);
          for (let j = 0; j < d; j++) dVector[j]! += g * other[k * d + j]!;
        }
        // Through the normalisation: only the part across the unit vector moves it.
        const along = dot(dVector, 0, own, i * d, d);
        for (let j = 0; j < d; j++) dVector[j] = (dVector[j]! - along * own[i * d + j]!) / norms[i]!;
        const tokens = batch[i]![side];
        for (let t = 0; t < tokens.rows.length; t++) {
          const row = tokens.rows[t]!;
          const w = tokens.weights[t]!;
          touched[row] = 1;
          for (let j = 0; j < d; j++) gradient[row * d + j]! += w * dVector[j]!;
        }
      }
    }
    adam.step(rows, gradient, touched, d);
    input.onStep?.(step, loss);
  }
}

/** Adam, applied to the rows a step touched (the others have no gradient, and keep their moments). */
class AdamState {
  private readonly first: Float32Array;
  private readonly second: Float32Array;
  private t = 0;
  constructor(
    size: number,
    private readonly learningRate: number,
  ) {
    this.first = new Float32Array(size);
    this.second = new Float32Array(size);
  }

  step(values: Float32Array, gradient: Float32Array, touched: Uint8Array, d: number): void {
    this.t += 1;
    const c1 = 1 - 0.9 ** this.t;
    const c2 = 1 - 0.999 ** this.t;
    for (let row = 0; row < touched.length; row++) {
      if (!touched[row]) continue;
      for (let i = row * d; i < (row + 1) * d; i++) {
        const g = gradient[i]!;
        this.first[i] = 0.9 * this.first[i]! + 0.1 * g;
        this.second[i] = 0.999 * this.second[i]! + 0.001 * g * g;
        values[i]! -= (this.learningRate * (this.first[i]! / c1)) / (Math.sqrt(this.second[i]! / c2) + 1e-8);
      }
    }
  }
}

/** The text's weighted mean, normalised, written at `out[offset…]`; returns the norm before (0: no direction, left zero). */
export function meanVector(rows: Float32Array, d: number, tokens: WeightedTokens, out: Float32Array, offset: number): number {
  out.fill(0, offset, offset + d);
  for (let t = 0; t < tokens.rows.length; t++) {
    const base = tokens.rows[t]! * d;
    const w = tokens.weights[t]!;
    for (let j = 0; j < d; j++) out[offset + j]! += w * rows[base + j]!;
  }
  const norm = Math.sqrt(dot(out, offset, out, offset, d));
  if (!(norm > 1e-12)) {
    out.fill(0, offset, offset + d);
    return 0;
  }
  for (let j = 0; j < d; j++) out[offset + j]! /= norm;
  return norm;
}

/** Σ a[aOffset + j] · b[bOffset + j] over j < d: a cosine when both rows are unit vectors. */
export function dot(a: Float32Array, aOffset: number, b: Float32Array, bOffset: number, d: number): number {
  let sum = 0;
  for (let j = 0; j < d; j++) sum += a[aOffset + j]! * b[bOffset + j]!;
  return sum;
}

/**
 * Cross-entropy of each softmax over `n` logits whose i-th is the target, the softmaxes read
 * along rows (stride 1 within, `n` between) or columns (`n` within, 1 between); adds
 * (softmax − target) / 2n into `gradient` and returns the mean loss.
 */
function softmaxCrossEntropy(logits: Float32Array, gradient: Float32Array, n: number, between: number, within: number): number {
  let loss = 0;
  for (let i = 0; i < n; i++) {
    let max = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < n; k++) max = Math.max(max, logits[i * between + k * within]!);
    let sum = 0;
    for (let k = 0; k < n; k++) sum += Math.exp(logits[i * between + k * within]! - max);
    loss += Math.log(sum) + max - logits[i * between + i * within]!;
    for (let k = 0; k < n; k++) {
      const at = i * between + k * within;
      gradient[at]! += (Math.exp(logits[at]! - max) / sum - (i === k ? 1 : 0)) / (2 * n);
    }
  }
  return loss / n;
}
