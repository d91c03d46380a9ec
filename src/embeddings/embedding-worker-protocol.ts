import type { EmbedderModuleSpec } from './embedder-module-spec.js';

/** What an EmbeddingPool's worker threads are set up with, report, and answer. */
export interface EmbeddingWorkerInit {
  spec: EmbedderModuleSpec;
}

export interface EmbedderIdentity {
  id: string;
  dimensions: number;
  maxInputTokens: number;
}

/** Vectors travel as one flat, transferred Float64Array: no per-number cloning, no precision loss. */
export interface EmbeddedBatch {
  count: number;
  vectors: Float64Array<ArrayBuffer>;
}

/**
 * Texts from which a batch is big: it fills a model call of its own, so a worker neither runs it
 * together with others nor takes it while holding more than one other (see embedding-pool.ts).
 */
export const BIG_BATCH_TEXTS = 8;
