import { createHash } from 'node:crypto';
import type { Embedder } from '../src/embeddings/embedder.js';

/**
 * A deterministic bag-of-words embedder for tests: each lower-cased word hashes to a signed
 * bucket, so texts that share words are close and results are reproducible without a model.
 */
export function createHashEmbedder(dimensions = 64, id = `test:hash-${dimensions}`): Embedder & { calls: number; texts: number } {
  const embedder = {
    id,
    dimensions,
    maxInputTokens: 512,
    calls: 0,
    texts: 0,
    async embed(texts: string[]): Promise<number[][]> {
      embedder.calls += 1;
      embedder.texts += texts.length;
      return texts.map((text) => {
        const v = new Array<number>(dimensions).fill(0);
        for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
          const h = createHash('sha1').update(word).digest();
          v[h.readUInt32LE(0) % dimensions]! += h[4]! & 1 ? 1 : -1;
        }
        const norm = Math.hypot(...v);
        // A text without words still needs a unit vector.
        if (norm === 0) return v.map((_, i) => (i === 0 ? 1 : 0));
        return v.map((x) => x / norm);
      });
    },
    async close() {},
  };
  return embedder;
}
