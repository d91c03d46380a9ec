import type { Embedder } from './embedder.js';

/**
 * Shares one computation between concurrent requests for the same single text. A chat turn
 * embeds its question once per index it recalls from (memories, passages, past turns) and once
 * more for an extractive answer, all at the same moment; the model need only run once. Batches
 * (ingestion) pass through. The shared call runs without a caller's signal, so one caller
 * giving up does not fail the others; each still stops waiting on its own signal.
 */
export function coalescingEmbedder(inner: Embedder): Embedder {
  const inFlight = new Map<string, Promise<number[]>>();
  return {
    id: inner.id,
    dimensions: inner.dimensions,
    maxInputTokens: inner.maxInputTokens,
    ...(inner.countTokens ? { countTokens: inner.countTokens.bind(inner) } : {}),
    async embed(texts, options) {
      if (texts.length !== 1) return inner.embed(texts, options);
      options?.signal?.throwIfAborted();
      const text = texts[0]!;
      let shared = inFlight.get(text);
      if (!shared) {
        const started = inner.embed([text]).then(([vector]) => vector!);
        shared = started;
        inFlight.set(text, started);
        const done = () => inFlight.delete(text);
        started.then(done, done);
      }
      return [await untilAborted(shared, options?.signal)];
    },
    close: () => inner.close(),
  };
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
