import type { Embedder } from '../embeddings/embedder.js';
import { passedThrough } from '../embeddings/passed-through.js';

export interface WriteVectorsLimits {
  /** Vectors held at most; the oldest is dropped first. */
  entries: number;
  /** Characters of the texts held at most (a memory may be 100,000 of them). */
  characters: number;
}

/**
 * A store is made per request (tenant-scoped.ts), so what it holds lives as long as the request;
 * the limits bound a long-lived one, where a vector nothing took (a save whose content was already
 * stored, a write nothing screened) would otherwise stay.
 */
const DEFAULT_LIMITS: WriteVectorsLimits = { entries: 128, characters: 1_000_000 };

/**
 * The store's embedder as a write uses it: each vector it makes is held for the one other step of
 * the write that needs the same text's vector, and handed over once. The firewall embeds a save's
 * content to score it, then the save stores that content's vector; extraction embeds its facts,
 * then screens them. Without this the second step runs the model again: the app's remembered
 * vectors (embeddings/recent-vectors.ts) spare short texts only, and a store built without them none.
 */
export function embedOncePerWrite(inner: Embedder, limits: WriteVectorsLimits = DEFAULT_LIMITS): Embedder {
  const held = new Map<string, number[]>();
  let characters = 0;
  const take = (text: string): number[] | undefined => {
    const vector = held.get(text);
    if (vector) {
      held.delete(text);
      characters -= text.length;
    }
    return vector;
  };
  const hold = (text: string, vector: readonly number[]) => {
    take(text);
    if (text.length > limits.characters || limits.entries <= 0) return;
    // A copy: the caller may change the vector it was given, never the one handed on.
    held.set(text, [...vector]);
    characters += text.length;
    for (const oldest of held.keys()) {
      if (held.size <= limits.entries && characters <= limits.characters) break;
      take(oldest);
    }
  };
  return {
    ...passedThrough(inner),
    async embed(texts, options) {
      const taken = texts.map(take);
      const missing = texts.filter((_, i) => !taken[i]);
      if (missing.length === 0) return taken as number[][];
      const vectors = await inner.embed(missing, options);
      if (vectors.length !== missing.length) throw new Error(`embedder ${inner.id} returned ${vectors.length} vectors for ${missing.length} texts`);
      missing.forEach((text, i) => hold(text, vectors[i]!));
      let next = 0;
      return taken.map((vector) => vector ?? vectors[next++]!);
    },
    // The store's embedder is the app's, which closes it.
    close: async () => {},
  };
}
