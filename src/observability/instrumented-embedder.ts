import type { Embedder } from '../embeddings/embedder.js';
import { passedThrough } from '../embeddings/passed-through.js';
import { embeddedTexts, embeddingDuration } from './metrics.js';

/** An embedder whose calls are timed and counted, and which knows whether it was closed (for /readyz). */
export interface InstrumentedEmbedder extends Embedder {
  readonly closed: boolean;
}

export function instrumentEmbedder(inner: Embedder): InstrumentedEmbedder {
  const labels = { embedder: inner.id };
  let closed = false;
  return {
    ...passedThrough(inner),
    get closed() {
      return closed;
    },
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
    close() {
      closed = true;
      return inner.close();
    },
  };
}
