import type { Embedder } from './embedder.js';
import { passedThrough } from './passed-through.js';

export interface RecentVectorsOptions {
  /** Texts remembered, the least recently used forgotten first. Default 1,024 (~6 MB). */
  entries?: number;
  /** Longer texts pass through unremembered. Default 1,000 characters. */
  maxTextLength?: number;
}

/**
 * Remembers the vectors of the texts embedded last, and serves a text seen again without the
 * model. The same text is often embedded twice in a row: a memory the model writes is screened by
 * the firewall (which embeds it) and then stored (which embedded it again); a search paged or run
 * again embeds its query again. A model gives a text the same vector in any batch, so a
 * remembered vector stands for a new one. Short texts only: a document's passages are seldom
 * embedded twice, and each would be kept as a key.
 */
export function rememberRecentVectors(inner: Embedder, options: RecentVectorsOptions = {}): Embedder & { readonly closed: boolean } {
  const entries = options.entries ?? 1_024;
  const maxTextLength = options.maxTextLength ?? 1_000;
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const remembered = new Map<string, Float64Array>();
  let closed = false;

  const recall = (text: string): Float64Array | undefined => {
    const vector = remembered.get(text);
    if (vector) {
      remembered.delete(text);
      remembered.set(text, vector);
    }
    return vector;
  };
  const remember = (text: string, vector: number[]) => {
    if (text.length > maxTextLength || entries <= 0) return;
    remembered.delete(text);
    remembered.set(text, Float64Array.from(vector));
    if (remembered.size > entries) remembered.delete(remembered.keys().next().value!);
  };

  return {
    ...passedThrough(inner),
    get closed() {
      return closed;
    },
    async embed(texts, embedOptions) {
      if (closed) throw new Error('the embedder is closed');
      embedOptions?.signal?.throwIfAborted();
      const found = texts.map((text) => (text.length <= maxTextLength ? recall(text) : undefined));
      // Each text the model must see, once, even when the call repeats it.
      const missing = [...new Set(texts.filter((_, i) => !found[i]))];
      const computed = new Map<string, number[]>();
      if (missing.length > 0) {
        const vectors = await inner.embed(missing, embedOptions);
        if (vectors.length !== missing.length) throw new Error(`${inner.id} returned ${vectors.length} vectors for ${missing.length} texts`);
        missing.forEach((text, i) => {
          computed.set(text, vectors[i]!);
          remember(text, vectors[i]!);
        });
      }
      // Copies: a caller may change its vectors, never the remembered ones.
      return texts.map((text, i) => (found[i] ? Array.from(found[i]!) : [...computed.get(text)!]));
    },
    close() {
      closed = true;
      remembered.clear();
      return inner.close();
    },
  };
}
