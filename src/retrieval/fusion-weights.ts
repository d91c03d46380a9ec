import type { SignalName } from './signal.js';

/**
 * How much each signal counts in weighted RRF, by name (`vector` and `text` are the engine's own;
 * a corpus's declared signals run when their weight is above 0); `k` is RRF's rank offset
 * (default 60).
 */
export interface FusionWeights {
  signals: Record<SignalName, number>;
  k?: number;
}

/**
 * Fusion weights per embedder, from `npm run calibrate` on SciFact's training split
 * (scripts/calibrate.ts). The bundled USE-lite is a weak retriever on its own there (nDCG@10
 * 0.283 against BM25's 0.697 on passages), so BM25 must dominate: vector 0.1 already scores below
 * BM25 and 1:1 loses a fifth of it; 0.05 at k 20 (0.698) is the sweep's best and mostly breaks
 * BM25's near-ties. The static model distilled from it is weaker alone (0.249) and its sweep peaks
 * at the same place: 0.6977 against BM25's 0.6972 (0.05 at k 20; 0.1 loses 0.007); on SQuAD's
 * tuning articles as passages, 0.8978 against 0.8973 (docs/benchmarks/static-embedder.md). Its
 * second version, tuned for search, is stronger alone than USE-lite (SciFact 0.433, SQuAD 0.634
 * against 0.629), yet BM25 still leads the fusion: 0.05 at k 20 is again the best of both sweeps
 * (0.6978 and 0.8976; 0.1 loses 0.002 on each).
 */
export const FUSION_WEIGHTS_BY_EMBEDDER: Readonly<Record<string, FusionWeights>> = Object.freeze({
  'bundled:use-lite': { signals: { vector: 0.05, text: 1 }, k: 20 },
  'static:use-lite-distilled-v1': { signals: { vector: 0.05, text: 1 }, k: 20 },
  'static:use-lite-distilled-v2': { signals: { vector: 0.05, text: 1 }, k: 20 },
});

/** For embedders not calibrated yet: BM25 still leads; run `npm run calibrate` for a better value. */
export const DEFAULT_FUSION_WEIGHTS: Readonly<FusionWeights> = Object.freeze({ signals: { vector: 0.5, text: 1 } });

/** A copy of the weights, their map of signals copied too (callers freeze or change theirs). */
export const copyFusionWeights = (weights: Readonly<FusionWeights>): FusionWeights => ({ ...weights, signals: { ...weights.signals } });

export function fusionWeightsFor(embedderId: string): FusionWeights {
  return copyFusionWeights(FUSION_WEIGHTS_BY_EMBEDDER[embedderId] ?? DEFAULT_FUSION_WEIGHTS);
}

/** The calibrated weights of an embedder, with the deployment's overrides (FUSION_*_WEIGHT) on top. */
export function configuredFusionWeights(embedderId: string, overrides: { vector?: number; text?: number }): FusionWeights {
  const calibrated = fusionWeightsFor(embedderId);
  const { vector, text } = calibrated.signals;
  return { ...calibrated, signals: { ...calibrated.signals, vector: overrides.vector ?? vector, text: overrides.text ?? text } };
}

/** The weights a request gives on the wire (`weights: {vector, text, k}`), as the engine takes them. */
export function fusionWeightsOf(wire: { vector: number; text: number; k?: number }): FusionWeights {
  return { signals: { vector: wire.vector, text: wire.text }, ...(wire.k !== undefined ? { k: wire.k } : {}) };
}

/** Search options as a request gives them, with their wire `weights` (if any) as the engine takes them. */
export function withEngineWeights<T extends { weights?: { vector: number; text: number; k?: number } | undefined }>({
  weights,
  ...rest
}: T): Omit<T, 'weights'> & { weights?: FusionWeights } {
  return { ...rest, ...(weights ? { weights: fusionWeightsOf(weights) } : {}) };
}
