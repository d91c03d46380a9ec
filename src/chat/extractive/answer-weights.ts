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
 * vectors of the 2 lexically best sentences). A sentence counts as answering when what the answer
 * shows for it (with the sentence before it when it opens with a pronoun) holds a gold answer.
 * The weights are a linear model fitted to rank an answering sentence first (softmax over each
 * question's candidates), rounded; answer@1 cross-validated five-fold by article:
 *
 *   BM25 over the candidate sentences alone                0.743
 *   every feature but `near`, no embedder                  0.781
 *   + `near` (LEXICAL_ANSWER_WEIGHTS)                      0.781
 *   + cosine of the 2 lexically best sentences, no `near`  0.787
 *   + cosine and `near`, fitted freely (cosine 0.39)       0.791 (in-sample 0.789)
 *   + cosine and `near`, cosine held at 0.65 (these)       0.788 (in-sample 0.789)
 *
 * The free fit weighs the cosine less than the source's rank (0.39 against 0.51): a sentence
 * that says what was asked in other words loses to any sentence of a better-ranked source, as
 * "Keep tea in a dry tin" did to "Green tea is grown in China" for "how should I store tea?".
 * Holding the cosine at 0.65 (the rest fitted; 0.5: 0.789, 0.56: 0.789) keeps it able to
 * overrule one rank, for 0.3 points cross-validated, within noise, in-sample unchanged.
 *
 * Two sentences embedded, not more: each adds its time in the bundled model to the answer, and
 * embedding 1, 2, 3, 4, 6 or every sentence cross-validated (without `near`) at 0.781, 0.787,
 * 0.785, 0.787, 0.789, 0.789. A small network of tanh units beside the weighted sum was within
 * noise and put the issue's "how should I store tea?" example wrong (README). The confidence adds
 * 2 × cosine: `decline` declines 85% of the questions asked of another article's documents,
 * which costs 0.4 points of answer@1 in-sample (the 80% point: 0.2).
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
