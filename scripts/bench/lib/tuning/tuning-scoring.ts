import type { AnswerWeights } from '../../../../src/chat/extractive/answer-weights.js';
import { type AnyKey, KEYS, K, COSINE, derive, type Row, type Features, type Vector } from './tuning-columns.js';
import { features } from './tuning-features.js';

// A weight vector's score, best candidate, decline threshold and answer@1, and how the script prints them.
export const vectorOf = (w: AnswerWeights): Vector => Float64Array.from(KEYS, (k) => (w as unknown as Record<string, number>)[k] ?? 0);
export const scoreAt = (row: Row, j: number, w: Vector) => {
  let s = 0;
  for (let i = 0; i < K; i++) s += row.x[j * K + i]! * w[i]!;
  return s;
};

/** The candidates given a vector: the `n` best under `prescore` (as scoreCandidates picks them); the rest have cosine 0. */
export function masked(n: number, prescore: Vector | ((row: Row, j: number) => number), set: Features = features): Features {
  const score = typeof prescore === 'function' ? prescore : (row: Row, j: number) => scoreAt(row, j, prescore);
  const mask = (row: Row): Row => {
    if (n >= row.n) return row;
    const order = Array.from({ length: row.n }, (_, j) => j).sort((a, b) => score(row, b) - score(row, a) || a - b);
    const x = Float64Array.from(row.x);
    for (const j of order.slice(n)) x[j * K + COSINE] = 0;
    const out = { ...row, x };
    derive(out);
    return out;
  };
  return { own: set.own.map(mask), other: set.other.map(mask) };
}
export const withoutCosine = (set: Features): Features => masked(0, new Float64Array(K), set);

/** The top candidate (ties to the earlier: better-ranked source, then document order) and its score. */
export function best(row: Row, w: Vector) {
  let top = -1;
  let topScore = -Infinity;
  for (let j = 0; j < row.n; j++) {
    const s = scoreAt(row, j, w);
    if (s > topScore) [top, topScore] = [j, s];
  }
  return { ok: top >= 0 && row.ok[top] === 1, score: topScore, top };
}

export const thresholdFor = (otherScores: number[], share: number) => {
  const sorted = [...otherScores].sort((a, b) => a - b);
  return sorted[Math.ceil(share * sorted.length) - 1]! + 1e-6;
};

/** answer@1 without declining; θ80, the lowest threshold declining ≥ 80% of questions asked of another article; answer@1 declining below it. */
export function evaluate(w: Vector, set: Features = features) {
  const own = set.own.map((r) => best(r, w));
  const other = set.other.map((r) => best(r, w));
  const at1 = own.filter((o) => o.ok).length / own.length;
  const threshold = thresholdFor(
    other.map((o) => o.score),
    0.8,
  );
  const at1Declining = own.filter((o) => o.ok && o.score >= threshold).length / own.length;
  return { at1, threshold, at1Declining };
}

export const fmt = (x: number) => x.toFixed(3);
export const weightsText = (w: Vector) =>
  KEYS.map((k, i) => [k, w[i]!] as const)
    .filter(([, v]) => v !== 0)
    .map(([k, v]) => `${k} ${+v.toFixed(3)}`)
    .join(', ');
export const show = (label: string, w: Vector, set?: Features) => {
  const r = evaluate(w, set);
  console.log(
    `${label.padEnd(44)} answer@1 ${fmt(r.at1)} | θ80 ${fmt(r.threshold)}: answer@1 ${fmt(r.at1Declining)} (${((r.at1Declining - r.at1) * 100).toFixed(1)}) | ${weightsText(w)}`,
  );
  return r;
};
export const unit = (key: AnyKey) => Float64Array.from(KEYS, (k) => (k === key ? 1 : 0));
