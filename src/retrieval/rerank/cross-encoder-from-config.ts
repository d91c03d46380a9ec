import os from 'node:os';
import type { Config } from '../../config/config.js';
import type { CrossEncoderReranker } from './cross-encoder-reranker.js';

export type RerankerConfig = Pick<
  Config,
  'RERANKER_MODEL' | 'RERANKER_WORKERS' | 'RERANKER_BATCH_SIZE' | 'RERANKER_MAX_TOKENS' | 'EMBEDDING_CACHE_DIR' | 'EMBEDDING_ALLOW_REMOTE'
>;

/**
 * The cross-encoder named by RERANKER_MODEL, or undefined when none is. It reads models through
 * the same transformers.js cache and remote setting as the embedder: one place for model files.
 */
export async function crossEncoderFromConfig(config: RerankerConfig): Promise<CrossEncoderReranker | undefined> {
  if (!config.RERANKER_MODEL) return undefined;
  // Imported only when a model is configured: transformers.js and its runtime take ~160 MB of
  // resident memory from the moment they load, whether or not anything is ever reranked.
  const { CrossEncoderReranker } = await import('./cross-encoder-reranker.js');
  const workers = config.RERANKER_WORKERS;
  return CrossEncoderReranker.load({
    model: config.RERANKER_MODEL,
    cacheDir: config.EMBEDDING_CACHE_DIR,
    allowRemote: config.EMBEDDING_ALLOW_REMOTE,
    workers,
    batchSize: config.RERANKER_BATCH_SIZE,
    maxLength: config.RERANKER_MAX_TOKENS,
    // Several workers split the cores between them instead of each starting a thread per core.
    ...(workers > 1 ? { threads: Math.max(1, Math.floor(os.availableParallelism() / workers)) } : {}),
  });
}
