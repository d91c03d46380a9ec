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
 * Tuned on SQuAD v1.1's tuning articles only (`npx tsx scripts/bench/extractive-tuning.ts`,
 * TUNING_QUESTIONS=1500: 1,500 questions, each asked of its article's documents and of another
 * article's, topK 5, USE-lite vectors). answer@1 (the top sentence holds a gold answer):
 *
 *   BM25 over the candidate sentences alone                0.738
 *   the grid's best without cosine (LEXICAL_ANSWER_WEIGHTS) 0.771
 *   every sentence embedded, the grid's best (cosine 0.5)  0.781; without cosine 0.771, rank 0.764,
 *                                                                 type 0.771, context 0.779
 *   the 3 lexically best embedded (these weights)          0.781  (best N=1: 0.774, N=2: 0.782, N=4: 0.782)
 *
 * `lexical` is the unit; the grid tried cosine 0.5–3, rank/type/context 0–0.3, bigram 0–0.4, and
 * coordinate ascent on finer steps found 0.782 at best: the optimum is flat. `decline` declines
 * 84.5% of the questions asked of another article's documents (the 80% point is 0.814) and costs
 * 0.4 points of answer@1 (0.781 → 0.777): a right answer almost always scores far above a stray match.
 */
export const ANSWER_WEIGHTS: AnswerWeights = { lexical: 1, cosine: 1, rank: 0.3, type: 0.2, bigram: 0.4, context: 0, decline: 0.85 };

/**
 * Without an embedder (or when it fails), the grid's best without cosine: answer@1 0.771. Its
 * threshold declines 84% of other-article questions at a cost of 2.4 points (0.771 → 0.747): words
 * alone tell a stray match from an answer less well. Also the prescore choosing which sentences
 * get a vector.
 */
export const LEXICAL_ANSWER_WEIGHTS: AnswerWeights = { lexical: 1, cosine: 0, rank: 0.2, type: 0.2, bigram: 0.1, context: 0.1, decline: 0.5 };

export function scoreSentence(f: SentenceFeatures, w: AnswerWeights): number {
  return w.lexical * f.lexical + w.cosine * f.cosine + w.rank * f.rank + w.type * f.type + w.bigram * f.bigram + w.context * f.context;
}
