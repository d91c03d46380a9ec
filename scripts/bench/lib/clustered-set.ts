import { seededRandom } from '../../../testkit/vector-fixtures.js';

/**
 * A generated corpus for vector search benches: clustered unit vectors in one flat Float32Array
 * (real embeddings cluster by topic), texts of Zipf-distributed pseudo-words for BM25, tags on
 * 10% (`common`), 2% (`some`) and 0.2% (`rare`) of the rows, and queries from the same distribution, not stored.
 */
export interface ClusteredSet {
  dims: number;
  /** Rows then queries, `dims` floats each. */
  vectors: Float32Array;
  rows: number;
  queries: number;
  row(i: number): number[];
  query(q: number): number[];
  text(i: number): string;
  queryText(q: number): string;
  tags(i: number): string[];
}

export const TAG_CASES = [
  { label: 'no filter', tag: null, matches: (_i: number) => true },
  { label: '10% tag', tag: 'common', matches: (i: number) => i % 10 === 3 },
  // Past the exact scan's fixed threshold, short of where the walk's widened list holds its rows.
  { label: '2% tag', tag: 'some', matches: (i: number) => i % 50 === 9 },
  { label: '0.2% tag', tag: 'rare', matches: (i: number) => i % 500 === 17 },
] as const;

export type TagCase = (typeof TAG_CASES)[number];

const SYLLABLES = ['ka', 'lo', 'mi', 'nu', 'pe', 'ri', 'so', 'ta', 'vu', 'ze', 'bra', 'dol', 'fin', 'gus', 'hem', 'jor'];
const word = (k: number) => {
  let s = '';
  for (let n = k + 16; n > 0; n = Math.floor(n / 16)) s += SYLLABLES[n % 16];
  return s;
};

/** `count` clustered unit vectors of `dims` floats in one flat array (real embeddings cluster by topic), seeded. */
export function clusteredVectors(count: number, dims: number, seed: number, clusters = 200): Float32Array {
  const rand = seededRandom(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dims }, gauss));
  const vectors = new Float32Array(count * dims);
  for (let i = 0; i < count; i++) {
    const c = centres[Math.floor(rand() * clusters)]!;
    const cn = Math.hypot(...c);
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      const x = c[d]! / cn + (gauss() * 0.6) / Math.sqrt(dims);
      vectors[i * dims + d] = x;
      norm += x * x;
    }
    norm = Math.sqrt(norm);
    for (let d = 0; d < dims; d++) vectors[i * dims + d]! /= norm;
  }
  return vectors;
}

export function clusteredSet(rows: number, queries: number, dims = 512, seed = 1, clusters = 200): ClusteredSet {
  const count = rows + queries;
  const vectors = clusteredVectors(count, dims, seed, clusters);
  const vocabulary = 5000;
  // Zipf: word k drawn with probability ~ 1/(k+1); rank by inverse CDF over a precomputed table.
  const cdf = new Float64Array(vocabulary);
  let acc = 0;
  for (let k = 0; k < vocabulary; k++) cdf[k] = acc += 1 / (k + 1);
  const zipf = (r: number) => {
    const x = r * acc;
    let lo = 0;
    let hi = vocabulary - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const words = (seedOf: number, n: number) => {
    const r = seededRandom(seedOf);
    return Array.from({ length: n }, () => word(zipf(r()))).join(' ');
  };
  const slice = (i: number) => Array.from(vectors.subarray(i * dims, (i + 1) * dims));
  return {
    dims,
    vectors,
    rows,
    queries,
    row: slice,
    query: (q) => slice(rows + q),
    text: (i) => words(1_000_003 + i, 12),
    // Mid-frequency words, as a question's content words are.
    queryText: (q) => {
      const r = seededRandom(7_000_001 + q);
      return Array.from({ length: 3 }, () => word(20 + Math.floor(r() * 500))).join(' ');
    },
    tags: (i) => TAG_CASES.flatMap((c) => (c.tag && c.matches(i) ? [c.tag] : [])),
  };
}

/** The exact top k rows (by cosine = dot product of unit vectors) among the first `rows` matching `filter`. */
export function exactTopK(set: ClusteredSet, q: number, rows: number, filter: (i: number) => boolean, k: number): number[] {
  const { dims, vectors } = set;
  const base = (set.rows + q) * dims;
  const best: { i: number; s: number }[] = [];
  for (let i = 0; i < rows; i++) {
    if (!filter(i)) continue;
    let s = 0;
    const o = i * dims;
    for (let d = 0; d < dims; d++) s += vectors[o + d]! * vectors[base + d]!;
    if (best.length < k || s > best[best.length - 1]!.s) {
      best.push({ i, s });
      best.sort((a, b) => b.s - a.s);
      if (best.length > k) best.pop();
    }
  }
  return best.map(({ i }) => i);
}

export const percentile = (xs: readonly number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
