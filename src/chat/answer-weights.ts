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
 * vectors of the 3 lexically best sentences). A sentence counts as answering when what the answer
 * shows for it (with the sentence before it when it opens with a pronoun) holds a gold answer.
 * The weights are a linear model fitted to rank an answering sentence first (softmax over each
 * question's candidates), rounded; answer@1 cross-validated five-fold by article:
 *
 *   BM25 over the candidate sentences alone                0.743
 *   every feature but `near`, no embedder                  0.781
 *   + `near` (LEXICAL_ANSWER_WEIGHTS)                      0.780
 *   + cosine of the 3 lexically best sentences, no `near`  0.785
 *   + cosine and `near` (these weights)                    0.787 (in-sample 0.789)
 *
 * A small network (4 tanh units beside the weighted sum) reached 0.790 (0.783 without an
 * embedder): within noise of these, and it put the issue's "how should I store tea?" example
 * wrong. The confidence adds 2 × cosine: `decline` is the point declining 85% of the questions
 * asked of another article's documents, which costs 0.3 points of answer@1 (the 80% point: 0.1).
 */
export const ANSWER_WEIGHTS: AnswerWeights = {
  lexical: 1,
  cosine: 0.56,
  rank: 0.46,
  type: 0.28,
  near: 0.21,
  bigram: 0.33,
  context: 0.26,
  proximity: 0.39,
  rare: 0.17,
  length: 0.24,
  position: 0.07,
  passage: 0.46,
  confidence: { cosine: 2 },
  decline: 1.96,
};

/**
 * Without an embedder (or when it fails), the fit without cosine: answer@1 0.780 cross-validated.
 * The confidence adds 2 × lexical and 4 × passage (how much of the question the sentence and its
 * source have, which a stray match lacks): `decline` declines 82% of other-article questions at a
 * cost of 0.8 points in-sample. Also the prescore choosing which sentences get a vector.
 */
export const LEXICAL_ANSWER_WEIGHTS: AnswerWeights = {
  lexical: 1,
  cosine: 0,
  rank: 0.54,
  type: 0.28,
  near: 0.22,
  bigram: 0.34,
  context: 0.29,
  proximity: 0.41,
  rare: 0.18,
  length: 0.24,
  position: 0.09,
  passage: 0.46,
  confidence: { lexical: 2, passage: 4 },
  decline: 2.61,
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
