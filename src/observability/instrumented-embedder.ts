import type { Embedder } from '../embeddings/embedder.js';
import { passedThrough } from '../embeddings/passed-through.js';
import { embeddedTexts, embeddingDuration } from './metrics.js';

/** An embedder whose calls are timed and counted: put directly around the model, it measures the model's own work. */
export function instrumentEmbedder(inner: Embedder): Embedder {
  const labels = { embedder: inner.id };
  return {
    ...passedThrough(inner),
    async embed(texts, options) {
      const stop = embeddingDuration.startTimer(labels);
      try {
        const vectors = await inner.embed(texts, options);
        stop({ outcome: 'ok' });
        embeddedTexts.inc(labels, texts.length);
        return vectors;
      } catch (err) {
        stop({ outcome: 'error' });
        throw err;
      }
    },
    close: () => inner.close(),
  };
}
