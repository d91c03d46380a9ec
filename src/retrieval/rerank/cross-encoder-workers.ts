import { siblingUrl } from '../../util/module-worker.js';
import { WorkerPool } from '../../workers/worker-pool.js';
import type { CrossEncoderModelOptions, CrossEncoderScorer } from './cross-encoder-model.js';
import type { CrossEncoderIdentity, CrossEncoderWorkerInit, ScoreTask } from './cross-encoder-worker-protocol.js';

export interface CrossEncoderWorkersOptions extends CrossEncoderModelOptions {
  /** Worker threads, each with its own copy of the model. Default 1. */
  workers?: number;
  /** Give up replacing crashed workers after this many replacements in a row fail to start. Default 3. */
  maxFailedRestarts?: number;
}

/** A worker died (uncaught error, exit, out of memory) while scoring, or none could be started. */
export class CrossEncoderWorkerCrashedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CrossEncoderWorkerCrashedError';
  }
}

/**
 * A cross-encoder in worker threads: onnxruntime-node runs a session synchronously, which in the
 * server's thread would stall every other request for as long as a batch takes. Batches queue
 * first in, first out and go to idle workers, one at a time each (the reranker already keeps
 * at most one batch per worker of a call in flight); a worker that crashes is replaced and its
 * batch rejected (the same input would most likely crash the next one too).
 */
export class CrossEncoderWorkers implements CrossEncoderScorer {
  readonly id: string;
  readonly maxLength: number;

  private constructor(private readonly pool: WorkerPool<ScoreTask, Float64Array<ArrayBuffer>, CrossEncoderIdentity, CrossEncoderWorkerInit>) {
    this.id = pool.info.id;
    this.maxLength = pool.info.maxLength;
  }

  get parallelism(): number {
    return Math.max(1, this.pool.size);
  }

  static async start(options: CrossEncoderWorkersOptions): Promise<CrossEncoderWorkers> {
    const { workers = 1, maxFailedRestarts = 3, ...model } = options;
    const pool = await WorkerPool.start<ScoreTask, Float64Array<ArrayBuffer>, CrossEncoderIdentity, CrossEncoderWorkerInit>({
      entryUrl: siblingUrl(import.meta.url, 'cross-encoder-worker'),
      init: { options: model },
      workers,
      tasksPerWorker: 1,
      maxFailedRestarts,
      name: 'CrossEncoderWorkers',
      workerName: 'cross-encoder worker',
      crashedError: CrossEncoderWorkerCrashedError,
    });
    return new CrossEncoderWorkers(pool);
  }

  async score(query: string, passages: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[]> {
    if (this.pool.closed) throw new Error('CrossEncoderWorkers is closed');
    options.signal?.throwIfAborted();
    if (passages.length === 0) return [];
    return Array.from(await this.pool.run({ query, passages: [...passages] }, { signal: options.signal }));
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

export function startCrossEncoderWorkers(options: CrossEncoderWorkersOptions): Promise<CrossEncoderWorkers> {
  return CrossEncoderWorkers.start(options);
}
