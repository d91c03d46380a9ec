import os from 'node:os';
import { ConfigError, type Config } from '../config/config.js';
import { BUNDLED_USE_IDENTITY } from './bundled-use-embedder.js';
import type { Embedder } from './embedder.js';
import { bundledUseSpec, loadEmbedderFromSpec, transformersSpec, type EmbedderModuleSpec } from './embedder-module-spec.js';
import { EmbeddingPool, createEmbeddingPool } from './embedding-pool.js';
import { createOpenAiEmbedder } from './openai-embedder.js';
import { createStaticEmbedder } from './static-embedder.js';
import { bundledStaticModelDir } from './static-model-files.js';
import { type EmbedderForStore, NEW_STORE_PROVIDER, providerForStore } from './store-default-provider.js';
import { loadUseLiteTokenizer } from './use-lite-tokenizer.js';

export type EmbeddingConfig = Pick<
  Config,
  | 'EMBEDDING_PROVIDER'
  | 'EMBEDDING_MODEL'
  | 'EMBEDDING_DIMENSIONS'
  | 'EMBEDDING_CACHE_DIR'
  | 'EMBEDDING_ALLOW_REMOTE'
  | 'EMBEDDING_WORKERS'
  | 'EMBEDDING_BATCH_SIZE'
  | 'EMBEDDING_WORKER_NICENESS'
  | 'EMBEDDING_BASE_URL'
  | 'EMBEDDING_API_KEY'
> &
  Partial<Pick<Config, 'DATABASE_URL'>>;

export const DEFAULT_OPENAI_EMBEDDING_MODEL = 'text-embedding-3-small';

/**
 * The configured embedder; with EMBEDDING_PROVIDER unset, a maker of the one the store was
 * embedded with, which createAppContext calls once it has read the store's vector space.
 */
export async function configuredEmbedder(config: EmbeddingConfig): Promise<Embedder | EmbedderForStore> {
  // The static model's folder unset: the bundled version the store was embedded with, the newest for a new one.
  const staticFor = (storedEmbedderId: string | null) =>
    createEmbedder({ ...config, EMBEDDING_PROVIDER: 'static', EMBEDDING_MODEL: config.EMBEDDING_MODEL ?? bundledStaticModelDir(storedEmbedderId) });
  if (config.EMBEDDING_PROVIDER === 'static' && !config.EMBEDDING_MODEL) return staticFor;
  if (config.EMBEDDING_PROVIDER) return createEmbedder(config);
  return (storedEmbedderId) => {
    const provider = providerForStore(storedEmbedderId);
    return provider === 'static' ? staticFor(storedEmbedderId) : createEmbedder({ ...config, EMBEDDING_PROVIDER: provider });
  };
}

/**
 * Builds the configured embedder. Local models (bundled, transformers) run in a worker pool
 * when EMBEDDING_WORKERS (default: the number of cores) is above 1, in this thread otherwise;
 * the static model (EMBEDDING_MODEL: its folder, default models/static-use-lite-v2) always in this thread.
 */
export async function createEmbedder(configured: EmbeddingConfig): Promise<Embedder> {
  // Unset, with no store to ask (scripts, `npm run reembed`): what a new store gets.
  const config = { ...configured, EMBEDDING_PROVIDER: configured.EMBEDDING_PROVIDER ?? NEW_STORE_PROVIDER };
  if (config.EMBEDDING_PROVIDER === 'openai') {
    return createOpenAiEmbedder({
      model: config.EMBEDDING_MODEL ?? DEFAULT_OPENAI_EMBEDDING_MODEL,
      baseURL: config.EMBEDDING_BASE_URL,
      apiKey: config.EMBEDDING_API_KEY,
      dimensions: config.EMBEDDING_DIMENSIONS,
      batchSize: config.EMBEDDING_BATCH_SIZE,
    });
  }

  if (config.EMBEDDING_PROVIDER === 'static') {
    // A table lookup per token: cheaper in this thread than a message to a worker would be.
    return checkDimensions(config, await createStaticEmbedder({ directory: config.EMBEDDING_MODEL }));
  }

  const workers = config.EMBEDDING_WORKERS ?? os.availableParallelism();
  const spec = localSpec(config, workers);
  const poolOptions = async () => ({
    workers,
    // Embedded, the database shares the event loop's core and the pool keeps one worker less
    // (see EmbeddingPoolOptions.minWorkers); beside a database server it keeps them all.
    ...(config.DATABASE_URL && { minWorkers: workers }),
    batchSize: config.EMBEDDING_BATCH_SIZE,
    niceness: config.EMBEDDING_WORKER_NICENESS,
    countTokens: await tokenCounterFor(config),
  });
  // The bundled model's identity is known without loading it: its workers start when first needed.
  const embedder =
    workers <= 1
      ? await loadEmbedderFromSpec(spec)
      : config.EMBEDDING_PROVIDER === 'bundled'
        ? EmbeddingPool.lazy(spec, BUNDLED_USE_IDENTITY, await poolOptions())
        : await createEmbeddingPool(spec, await poolOptions());
  return checkDimensions(config, embedder);
}

async function checkDimensions(config: EmbeddingConfig, embedder: Embedder): Promise<Embedder> {
  if (config.EMBEDDING_DIMENSIONS !== undefined && config.EMBEDDING_DIMENSIONS !== embedder.dimensions) {
    await embedder.close();
    throw new ConfigError(
      ['EMBEDDING_DIMENSIONS'],
      `EMBEDDING_DIMENSIONS is ${config.EMBEDDING_DIMENSIONS}, but ${embedder.id} produces ${embedder.dimensions}-dimensional vectors`,
    );
  }
  return embedder;
}

/**
 * The model's tokenizer in this thread, for a pool whose models live in the workers: chunking
 * counts tokens exactly. Tokenizers are small; the weights stay in the workers.
 */
async function tokenCounterFor(config: EmbeddingConfig & { EMBEDDING_PROVIDER: string }): Promise<(text: string) => number> {
  if (config.EMBEDDING_PROVIDER === 'bundled') {
    const tokenizer = await loadUseLiteTokenizer();
    return (text) => tokenizer.countTokens(text);
  }
  // Imported here only: the dispatching thread otherwise never loads transformers.js.
  const { loadTransformersTokenCounter } = await import('./transformers-token-counter.js');
  return loadTransformersTokenCounter({
    model: config.EMBEDDING_MODEL!,
    cacheDir: config.EMBEDDING_CACHE_DIR,
    allowRemote: config.EMBEDDING_ALLOW_REMOTE,
  });
}

/** Only names modules, so the model libraries load in the workers and not also in this thread. */
function localSpec(config: EmbeddingConfig & { EMBEDDING_PROVIDER: string }, workers: number): EmbedderModuleSpec {
  if (config.EMBEDDING_PROVIDER === 'bundled') {
    return bundledUseSpec({ batchSize: config.EMBEDDING_BATCH_SIZE });
  }
  if (!config.EMBEDDING_MODEL) {
    throw new ConfigError(
      ['EMBEDDING_MODEL'],
      'EMBEDDING_MODEL is required with EMBEDDING_PROVIDER=transformers (a Hugging Face model id or a local model folder)',
    );
  }
  return transformersSpec({
    model: config.EMBEDDING_MODEL,
    cacheDir: config.EMBEDDING_CACHE_DIR,
    allowRemote: config.EMBEDDING_ALLOW_REMOTE,
    batchSize: config.EMBEDDING_BATCH_SIZE,
    // onnxruntime would otherwise start a thread per core in every worker.
    ...(workers > 1 ? { threads: Math.max(1, Math.floor(os.availableParallelism() / workers)) } : {}),
  });
}
