import type { RerankerChoice } from './reranker-choice.js';

/** A search asked for a reranker this server was not configured with (`cross-encoder` without RERANKER_MODEL). */
export class RerankerUnavailableError extends Error {
  constructor(
    readonly reranker: RerankerChoice,
    readonly available: readonly RerankerChoice[],
  ) {
    super(`the ${reranker} reranker is not configured (available: ${available.join(', ')}); set RERANKER_MODEL for cross-encoder`);
    this.name = 'RerankerUnavailableError';
  }
}
