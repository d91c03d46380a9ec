import type { Embedder } from './embedder.js';
import { passedThrough } from './passed-through.js';

interface SharedEmbedding {
  vector: Promise<number[]>;
  controller: AbortController;
  /** Callers still waiting that could give up; one without a signal never does, and holds the work for good. */
  waiting: number;
  held: boolean;
}

/**
 * Shares one computation between concurrent requests for the same single text. A chat turn
 * embeds its question once per index it recalls from (memories, passages, past turns) and once
 * more for an extractive answer, all at the same moment; the model need only run once. Batches
 * (ingestion) pass through. The shared work is aborted only when every caller waiting on it has
 * given up (a request timeout still stops its embedding), and each caller stops waiting on its
 * own signal at once.
 */
export function coalescingEmbedder(inner: Embedder): Embedder {
  const inFlight = new Map<string, SharedEmbedding>();
  return {
    ...passedThrough(inner),
    async embed(texts, options) {
      if (texts.length !== 1) return inner.embed(texts, options);
      const signal = options?.signal;
      signal?.throwIfAborted();
      const text = texts[0]!;
      let shared = inFlight.get(text);
      if (!shared) {
        const controller = new AbortController();
        const entry: SharedEmbedding = {
          // Urgent as its first caller asked: a search and a save of the same text rarely meet.
          vector: inner.embed([text], { signal: controller.signal, ...(options?.urgent ? { urgent: true } : {}) }).then(([vector]) => vector!),
          controller,
          waiting: 0,
          held: false,
        };
        inFlight.set(text, entry);
        const done = () => {
          if (inFlight.get(text) === entry) inFlight.delete(text);
        };
        entry.vector.then(done, done);
        shared = entry;
      }
      const entry = shared;
      if (!signal) {
        entry.held = true;
        return [await entry.vector];
      }
      entry.waiting += 1;
      const leave = () => {
        entry.waiting -= 1;
        if (entry.waiting === 0 && !entry.held) {
          // Nobody wants it any more: stop the work, and let a later caller start afresh.
          if (inFlight.get(text) === entry) inFlight.delete(text);
          entry.controller.abort(signal.reason);
        }
      };
      return [await untilAborted(entry.vector, signal, leave)];
    },
    close: () => inner.close(),
  };
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, onAbort: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => {
      onAbort();
      reject(signal.reason);
    };
    signal.addEventListener('abort', abort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', abort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', abort);
        reject(error);
      },
    );
  });
}
