/** How much each retriever counts in weighted RRF; `k` is RRF's rank offset (default 60). */
export interface FusionWeights {
  vector: number;
  text: number;
  k?: number;
}

/**
 * Fusion weights per embedder, from `npm run calibrate` on SciFact's training split
 * (scripts/calibrate.ts). The bundled USE-lite is a weak retriever on its own there (nDCG@10
 * 0.283 against BM25's 0.697 on passages), so BM25 must dominate: vector 0.1 already scores below
 * BM25 and 1:1 loses a fifth of it; 0.05 at k 20 (0.698) is the sweep's best and mostly breaks
 * BM25's near-ties.
 */
export const FUSION_WEIGHTS_BY_EMBEDDER: Readonly<Record<string, FusionWeights>> = Object.freeze({
  'bundled:use-lite': { vector: 0.05, text: 1, k: 20 },
});

/** For embedders not calibrated yet: BM25 still leads; run `npm run calibrate` for a better value. */
export const DEFAULT_FUSION_WEIGHTS: Readonly<FusionWeights> = Object.freeze({ vector: 0.5, text: 1 });

export function fusionWeightsFor(embedderId: string): FusionWeights {
  return { ...(FUSION_WEIGHTS_BY_EMBEDDER[embedderId] ?? DEFAULT_FUSION_WEIGHTS) };
}

/** The calibrated weights of an embedder, with the deployment's overrides (FUSION_*_WEIGHT) on top. */
export function configuredFusionWeights(embedderId: string, overrides: { vector?: number; text?: number }): FusionWeights {
  const calibrated = fusionWeightsFor(embedderId);
  return { ...calibrated, vector: overrides.vector ?? calibrated.vector, text: overrides.text ?? calibrated.text };
}
