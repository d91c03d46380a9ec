import type { Embedder } from '../src/embeddings/embedder.js';

/** Seeded PRNG (mulberry32), so hand-made vector sets are the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function unit(v: number[]): number[] {
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** Vectors around a few random centres, like real embeddings (which cluster by topic). */
export function clusteredVectors(count: number, dimensions: number, seed = 1, clusters = 50): number[][] {
  const rand = seededRandom(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
  const centres = Array.from({ length: clusters }, () => unit(Array.from({ length: dimensions }, gauss)));
  return Array.from({ length: count }, () => {
    const c = centres[Math.floor(rand() * clusters)]!;
    return unit(c.map((x) => x + ((0.35 * gauss()) / Math.sqrt(dimensions)) * 3));
  });
}

export function cosine(a: number[], b: number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** An embedder that only knows the texts it was given vectors for: lets tests choose exact geometry. */
export function createTableEmbedder(dimensions: number, table: Map<string, number[]>): Embedder {
  return {
    id: `test:table-${dimensions}`,
    dimensions,
    maxInputTokens: 512,
    async embed(texts) {
      return texts.map((t) => {
        const v = table.get(t);
        if (!v) throw new Error(`no vector for ${JSON.stringify(t)}`);
        return v;
      });
    },
    async close() {},
  };
}
