import type { SentenceFeatures } from './sentence-features.js';

/** How the features of a sentence add up to its score, and the score below which nothing answers. */
export interface AnswerWeights {
  lexical: number;
  cosine: number;
  rank: number;
  type: number;
  bigram: number;
  context: number;
  /** The best sentence scoring below this is a weak match: the answer declines instead. */
  decline: number;
}

/**
 * Tuned on SQuAD v1.1 (the tuning articles only; `scripts/bench/extractive-tuning.ts`, figures
 * in the README): see there for the grid and what each weight bought.
 */
export const ANSWER_WEIGHTS: AnswerWeights = { lexical: 1, cosine: 1, rank: 0.3, type: 0.2, bigram: 0.4, context: 0, decline: 0.85 };

/** Without an embedder (no cosine), tuned the same way. */
export const LEXICAL_ANSWER_WEIGHTS: AnswerWeights = { lexical: 1, cosine: 0, rank: 0.2, type: 0.2, bigram: 0.1, context: 0.1, decline: 0.5 };

export function scoreSentence(f: SentenceFeatures, w: AnswerWeights): number {
  return w.lexical * f.lexical + w.cosine * f.cosine + w.rank * f.rank + w.type * f.type + w.bigram * f.bigram + w.context * f.context;
}
