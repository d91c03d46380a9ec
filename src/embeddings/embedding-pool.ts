import os from 'node:os';
import { WorkerPool } from '../workers/worker-pool.js';
import type { Embedder } from './embedder.js';
import { siblingModuleUrl, type EmbedderModuleSpec } from './embedder-module-spec.js';
import type { EmbeddedBatch, EmbedderIdentity, EmbeddingWorkerInit } from './embedding-worker-protocol.js';
import { splitIntoBatches } from './split-into-batches.js';

export interface EmbeddingPoolOptions {
  /** Worker threads; default os.availableParallelism(). Each holds its own copy of the model. */
  workers?: number;
  /** Most texts per task sent to a worker (smaller calls are split evenly across workers). Default 32. */
  batchSize?: number;
  /** Give up replacing workers after this many replacements in a row fail to start. Default 3. */
  maxFailedRestarts?: number;
  /** The model's tokenizer in this thread, when it is cheap to have here: becomes `countTokens`. */
  countTokens?: (text: string) => number;
}

/** A worker died (uncaught error, exit, out of memory) while running a batch. */
export class EmbeddingWorkerCrashedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingWorkerCrashedError';
  }
}

/**
 * Batches a worker holds at once: the one it computes and the next. With only one, a worker
 * that finishes waits until this thread takes its result and sends more, and during ingestion
 * this thread is often busy for milliseconds at a time (PGlite's statements run on it).
 */
const TASKS_PER_WORKER = 2;

/**
 * Runs a local embedder in a pool of worker threads, for real parallelism: the bundled model's
 * wasm backend computes on one core per thread. Calls are split into batches, which queue with
 * those of other calls, go to idle workers and are reassembled in order. A worker that crashes
 * is replaced; its batch is rejected, not retried, since the same input would most likely crash
 * the next worker too.
 */
export class EmbeddingPool implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly maxInputTokens: number;
  readonly countTokens?: (text: string) => number;

  private constructor(
    private readonly pool: WorkerPool<string[], EmbeddedBatch, EmbedderIdentity, EmbeddingWorkerInit>,
    private readonly batchSize: number,
    countTokens: ((text: string) => number) | undefined,
  ) {
    if (countTokens) this.countTokens = countTokens;
    this.id = pool.info.id;
    this.dimensions = pool.info.dimensions;
    this.maxInputTokens = pool.info.maxInputTokens;
  }

  static async start(spec: EmbedderModuleSpec, options: EmbeddingPoolOptions = {}): Promise<EmbeddingPool> {
    const pool = await WorkerPool.start<string[], EmbeddedBatch, EmbedderIdentity, EmbeddingWorkerInit>({
      entryUrl: siblingModuleUrl('embedding-worker'),
      init: { spec },
      workers: options.workers ?? os.availableParallelism(),
      tasksPerWorker: TASKS_PER_WORKER,
      maxFailedRestarts: options.maxFailedRestarts ?? 3,
      name: 'EmbeddingPool',
      workerName: 'embedding worker',
      crashedError: EmbeddingWorkerCrashedError,
    });
    return new EmbeddingPool(pool, options.batchSize ?? 32, options.countTokens);
  }

  /** Live workers, including replacements still starting. */
  get size(): number {
    return this.pool.size;
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    if (this.pool.closed) throw new Error('EmbeddingPool is closed');
    options.signal?.throwIfAborted();
    if (texts.length === 0) return [];

    // A call smaller than workers x batchSize is cut finer so that every worker gets a share;
    // batch size barely moves single-thread throughput, idle workers do.
    const batchSize = Math.min(this.batchSize, Math.ceil(texts.length / Math.max(1, this.size)));
    const batches = await this.pool.runAll(splitIntoBatches(texts, batchSize), { signal: options.signal });
    return batches.flatMap(({ count, vectors }) => unflatten(vectors, count, this.dimensions));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

export function createEmbeddingPool(spec: EmbedderModuleSpec, options: EmbeddingPoolOptions = {}): Promise<EmbeddingPool> {
  return EmbeddingPool.start(spec, options);
}

function unflatten(flat: Float64Array, count: number, dimensions: number): number[][] {
  return Array.from({ length: count }, (_, i) => Array.from(flat.subarray(i * dimensions, (i + 1) * dimensions)));
}
