import { DEFAULT_FUSION_WEIGHTS, type FusionWeights, copyFusionWeights } from '../retrieval/fusion-weights.js';

/**
 * Fusion weights of the turns corpus per embedder, chosen on two tuning sets. `npm run
 * calibrate:turns` on SQuAD's tuning articles (2,000 questions against the sentences of their
 * article): a turn is short conversational text, where USE-lite does much better than on SciFact's
 * abstracts (the documents' weights); there vector 0.3 at k 20 had the best hit@5 (0.9105, against
 * BM25 alone 0.8920), 0.5 0.9070 and hit@10 0.9420 (0.9430 at 0.3), and past 0.5 the weak vector
 * side pushes BM25's right answers down (0.6: 0.8985). `npm run bench:longmemeval` (BENCH_TUNE) on
 * LongMemEval's tuning part (87 questions, ~245 turns each among 21k): session R_all@5 / @10 and
 * turn R_all@10 0.89 / 0.94 / 0.84 at 0.3, 0.89 / 0.95 / 0.86 at 0.5, 0.90 / 0.95 / 0.86 at 0.6,
 * 0.91 / 0.99 / 0.79 at 1: there the vector side finds sessions that BM25 misses. 0.5 at k 20 gains
 * on chat logs for 0.0035 of SQuAD's hit@5. The static model distilled from USE-lite, on the same
 * 2,000 questions: BM25 alone hit@5 / hit@10 0.8920 / 0.9320, vector alone 0.6330 / 0.7265; 0.3 at
 * k 20 0.8915 / 0.9390 (the best hit@10 of the plain sweep), 0.5 0.8655 / 0.9325: its weaker vector
 * side costs BM25's answers sooner, so it gets 0.3. Its second version, tuned for search: vector
 * alone 0.7275 / 0.8025 (USE-lite's 0.7190 / 0.8025), 0.3 at k 20 0.9020 / 0.9340 (the sweep's best
 * hit@5), 0.5 0.8905 / 0.9345; on LongMemEval at the conversation prior of 4, session R_all@5 / @10
 * / turn R_all@10 0.93 / 0.97 / 0.82 at 0.3, 0.92 / 0.97 / 0.82 at 0.5, 0.93 / 0.97 / 0.78 at 1.
 */
export const TURN_FUSION_WEIGHTS_BY_EMBEDDER: Readonly<Record<string, FusionWeights>> = Object.freeze({
  'bundled:use-lite': { signals: { vector: 0.5, text: 1 }, k: 20 },
  'static:use-lite-distilled-v1': { signals: { vector: 0.3, text: 1 }, k: 20 },
  'static:use-lite-distilled-v2': { signals: { vector: 0.3, text: 1 }, k: 20 },
});

export function turnFusionWeightsFor(embedderId: string): FusionWeights {
  return copyFusionWeights(TURN_FUSION_WEIGHTS_BY_EMBEDDER[embedderId] ?? DEFAULT_FUSION_WEIGHTS);
}
