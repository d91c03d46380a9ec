import type { Embedder } from './embedder.js';

/**
 * What a wrapper around an embedder passes on unchanged: the vector space it names, the model's
 * tokenizer (chunking would otherwise fall back to an estimate) and whether it can still embed
 * (a readiness probe asks the outermost wrapper).
 */
export function passedThrough(inner: Embedder): Omit<Embedder, 'embed' | 'close'> {
  return {
    id: inner.id,
    dimensions: inner.dimensions,
    maxInputTokens: inner.maxInputTokens,
    ...(inner.countTokens ? { countTokens: inner.countTokens.bind(inner) } : {}),
    ...(inner.alive ? { alive: inner.alive.bind(inner) } : {}),
  };
}
