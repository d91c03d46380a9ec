import { DEFAULT_FUSION_WEIGHTS, type FusionWeights } from '../retrieval/fusion-weights.js';

/**
 * Fusion weights of the turns corpus per embedder, from `npm run calibrate:turns` on SQuAD's tuning
 * articles (2,000 questions against the sentences of their article). A turn is short conversational
 * text, where USE-lite does much better than on SciFact's abstracts (the documents' weights): there,
 * vector 0.3 at k 20 had the best hit@5 (0.9105, against BM25 alone 0.8920 and the documents'
 * 0.05 at 0.8930) and hit@10 (0.9430) within 0.0005 of the sweep's best; past 0.5 the weak vector
 * side starts to push BM25's right answers down.
 */
export const TURN_FUSION_WEIGHTS_BY_EMBEDDER: Readonly<Record<string, FusionWeights>> = Object.freeze({
  'bundled:use-lite': { vector: 0.3, text: 1, k: 20 },
});

export function turnFusionWeightsFor(embedderId: string): FusionWeights {
  return { ...(TURN_FUSION_WEIGHTS_BY_EMBEDDER[embedderId] ?? DEFAULT_FUSION_WEIGHTS) };
}
