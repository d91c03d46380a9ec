import type { Embedder } from '../../../src/embeddings/embedder.js';

/**
 * The embedder's vectors handed over on a later turn of the event loop, as a worker's answer would
 * be: resolved at once (from a vector cache), ingests would chain on microtasks only and starve
 * every timer (PGlite's statistics upkeep among them).
 */
export function asWorkerWould(inner: Embedder): Embedder {
  return {
    ...inner,
    async embed(texts, options) {
      await new Promise((r) => setImmediate(r));
      return inner.embed(texts, options);
    },
  };
}
