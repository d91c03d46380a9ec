import type { SentenceFeatures } from './sentence-features.js';

/** How the features of a sentence add up to its score, and the score below which nothing answers. */
export interface AnswerWeights {
  lexical: number;
  cosine: number;
  rank: number;
  type: number;
  /** The best sentence scoring below this is a weak match: the answer declines instead. */
  decline: number;
}

/**
 * Tuned on SQuAD v1.1 (the tuning articles only; `scripts/bench/extractive-tuning.ts`, figures
 * in the README): see there for the grid and what each weight bought.
 */
export const ANSWER_WEIGHTS: AnswerWeights = { lexical: 1, cosine: 0.5, rank: 0.1, type: 0.15, decline: 0.45 };

/** Without an embedder (no cosine), tuned the same way. */
export const LEXICAL_ANSWER_WEIGHTS: AnswerWeights = { lexical: 1, cosine: 0, rank: 0.1, type: 0.15, decline: 0.3 };

export function scoreSentence(f: SentenceFeatures, w: AnswerWeights): number {
  return w.lexical * f.lexical + w.cosine * f.cosine + w.rank * f.rank + w.type * f.type;
}
