import type { SentenceFeatures } from './sentence-features.js';

export type FeatureWeights = Record<keyof SentenceFeatures, number>;

/** How the features of a sentence add up to its score, and when the best is too weak to answer. */
export interface AnswerWeights extends FeatureWeights {
  /**
   * Extra weight on the top sentence's features in the confidence compared with `decline`: what
   * ranks sentences within one question and what tells an answer from a stray match differ.
   */
  confidence: Partial<FeatureWeights>;
  /** The best sentence's confidence below this is a weak match: the answer declines instead. */
  decline: number;
}

/**
 * Tuned on SQuAD v1.1's tuning articles only (`npx tsx scripts/bench/extractive-tuning.ts`: 1,500
 * questions, each asked of its article's documents and of another article's, topK 5, USE-lite
 * vectors of the 3 lexically best sentences). The weights are a linear model fitted to rank an
 * answering sentence first (softmax over each question's candidates), rounded; answer@1 (the top
 * sentence holds a gold answer), cross-validated five-fold by article:
 *
 *   BM25 over the candidate sentences alone                0.738
 *   the old features (rank, type, word pairs, context)     0.765 fitted without an embedder
 *   + proximity, rarest word, length, position, passage    0.775 without an embedder (LEXICAL_ANSWER_WEIGHTS)
 *   + cosine of the 3 lexically best sentences             0.779 (in-sample 0.782; these weights)
 *
 * The confidence adds 2 × cosine: `decline` is the point declining 85% of the questions asked of
 * another article's documents, which costs 0.3 points of answer@1 (the 80% point: 0.1).
 */
export const ANSWER_WEIGHTS: AnswerWeights = {
  lexical: 1,
  cosine: 0.6,
  rank: 0.45,
  type: 0.38,
  bigram: 0.32,
  context: 0.23,
  proximity: 0.36,
  rare: 0.17,
  length: 0.24,
  position: 0.08,
  passage: 0.48,
  confidence: { cosine: 2 },
  decline: 1.97,
};

/**
 * Without an embedder (or when it fails), the fit without cosine: answer@1 0.775 cross-validated.
 * Its ranking score alone declines 80% of other-article questions at a cost of 1.5 points; the
 * confidence adds 2 × lexical and 4 × passage (how much of the question the sentence and its
 * source have, which a stray match lacks), which brings the cost down to 0.6 (cross-validated).
 * Also the prescore choosing which sentences get a vector.
 */
export const LEXICAL_ANSWER_WEIGHTS: AnswerWeights = {
  lexical: 1,
  cosine: 0,
  rank: 0.54,
  type: 0.38,
  bigram: 0.33,
  context: 0.25,
  proximity: 0.38,
  rare: 0.18,
  length: 0.25,
  position: 0.11,
  passage: 0.48,
  confidence: { lexical: 2, passage: 4 },
  decline: 2.62,
};

export function scoreSentence(f: SentenceFeatures, w: FeatureWeights): number {
  let score = 0;
  for (const key of Object.keys(f) as (keyof SentenceFeatures)[]) score += w[key] * f[key];
  return score;
}

/** The score of the best sentence plus the confidence's extra weights: compared with `decline`. */
export function confidenceOf(f: SentenceFeatures, w: AnswerWeights): number {
  let extra = 0;
  for (const [key, weight] of Object.entries(w.confidence) as [keyof SentenceFeatures, number][]) extra += weight * f[key];
  return scoreSentence(f, w) + extra;
}
