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
 * Fitted on SQuAD v1.1's tuning articles (`npx tsx scripts/bench/extractive-tuning.ts`: 1,500
 * questions, USE-lite vectors of the 2 lexically best sentences), a linear model ranking an
 * answering sentence first, rounded. answer@1 cross-validated five-fold by article: 0.788, against
 * 0.743 for BM25 over the same sentences. The cosine is held at 0.65 so that a paraphrase can
 * overrule one rank of its source (the free fit's 0.39 could not). The confidence adds 2 × cosine:
 * `decline` declines 85% of the questions asked of another article's documents, for 0.4 points of
 * answer@1 in-sample. How these were chosen, and what was tried: docs/benchmarks/extractive-answer.md,
 * "How the weights were chosen".
 */
export const ANSWER_WEIGHTS: AnswerWeights = {
  lexical: 1,
  cosine: 0.65,
  rank: 0.54,
  type: 0.32,
  near: 0.26,
  bigram: 0.38,
  context: 0.29,
  proximity: 0.46,
  rare: 0.2,
  length: 0.26,
  position: 0.08,
  passage: 0.57,
  confidence: { cosine: 2 },
  decline: 2.18,
};

/**
 * Without an embedder (or when it fails), the fit without cosine: answer@1 0.781 cross-validated.
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
