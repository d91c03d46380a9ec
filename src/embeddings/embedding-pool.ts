import os from 'node:os';
import { WorkerPool } from '../workers/worker-pool.js';
import type { EmbedOptions, Embedder } from './embedder.js';
import { siblingModuleUrl, type EmbedderModuleSpec } from './embedder-module-spec.js';
import { BIG_BATCH_TEXTS, type EmbeddedBatch, type EmbedderIdentity, type EmbeddingWorkerInit } from './embedding-worker-protocol.js';
import { splitIntoBatches } from './split-into-batches.js';

export interface EmbeddingPoolOptions {
  /** Most worker threads; default os.availableParallelism(). Each holds its own copy of the model. */
  workers?: number;
  /**
   * Workers kept running; default one less than `workers` (at least one). The others start when
   * bulk work (a batch of BIG_BATCH_TEXTS or more, or a share of a bulk call cut across the
   * workers) finds every worker busy, and stop after 30 s idle.
   */
  minWorkers?: number;
  /** Most texts per task sent to a worker (smaller calls are split evenly across workers). Default 32. */
  batchSize?: number;
  /** Give up replacing workers after this many replacements in a row fail to start. Default 3. */
  maxFailedRestarts?: number;
  /** The model's tokenizer in this thread, when it is cheap to have here: becomes `countTokens`. */
  countTokens?: (text: string) => number;
  /**
   * The workers' niceness on Linux (0–19, default 0): above 0 the model's computation yields the
   * cores to this process's event loop and to the database whenever they want them.
   */
  niceness?: number;
}

/** A worker died (uncaught error, exit, out of memory) while running a batch. */
export class EmbeddingWorkerCrashedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbeddingWorkerCrashedError';
  }
}

/**
 * Batches a worker holds at once: the one it computes and those next. With only one, a worker
 * that finishes waits until this thread takes its result and sends more, and during ingestion
 * this thread is often busy for milliseconds at a time (PGlite's statements run on it). Under load
 * the small ones it holds (queries, saves) go through the model together, up to 32 texts of the
 * same urgency (embedding-worker.ts). A big batch waits behind at most one other, as before:
 * held batches never move to an idle worker.
 */
const TASKS_PER_WORKER = 8;

/**
 * Each worker's young generation, where TF.js's objects of a model call are born and die. V8's
 * default (16 MB semi-spaces) kept ~34 MB of new space per worker; two workers of the bundled
 * model after 1,000 short texts, 120 long ones and 960 queries held 558–570 MB resident with it
 * and 452–463 MB at 8 MB, in the same time within this machine's noise.
 */
const WORKER_YOUNG_GENERATION_MB = 8;

/**
 * Most tasks a worker may hold to be given a big batch, or a share of a bulk call cut across the
 * workers (EmbedOptions.bulk): each wants a worker of its own, so that a worker kept idle starts
 * for it. Without it an imported session of five turns, cut in two, queued both shares on the one
 * worker kept, and PGlite's import ran at one worker's pace (docs/benchmarks/longmemeval.md).
 * Other small calls of several texts (an extractive answer's sentences, a batch of saves) stay
 * with the kept workers.
 */
const OWN_WORKER_ROOM = 2;

/**
 * Workers kept for small calls (queries, saves) when `minWorkers` is not given: one core is left to
 * the event loop and the embedded database, which runs on it. On two cores with PGlite (`npm run
 * bench:load`, 32 clients), keeping one of two did 16.8 and 17.7 requests a second against 15.9 and
 * 16.5, and 22.8 saves a second beside a searching client against 18.0, the search as fast; a bulk
 * import of turns with one worker alone was 25% slower (10.3 against 13.7 turns/s), which is why
 * the last still starts for bulk work. Beside a PostgreSQL server the same choice made searches
 * wait behind saves for their query's vector (p50 beside 16 writers 63.7 → 122.6 ms), so
 * createEmbedder keeps every worker there.
 */
function defaultMinWorkers(workers: number): number {
  return Math.max(1, workers - 1);
}

/**
 * Runs a local embedder in a pool of worker threads, for real parallelism: the bundled model's
 * wasm backend computes on one core per thread. Calls are split into batches, which queue with
 * those of other calls, go to idle workers and are reassembled in order. A worker that crashes
 * is replaced; its batch is rejected, not retried, since the same input would most likely crash
 * the next worker too. Batches it was running together with that one are rejected with it.
 */
export class EmbeddingPool implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly maxInputTokens: number;
  readonly countTokens?: (text: string) => number;

  private pool: Workers | undefined;
  private starting: Promise<Workers> | undefined;
  private closed = false;

  private constructor(
    private readonly startWorkers: () => Promise<Workers>,
    identity: EmbedderIdentity,
    private readonly workers: number,
    private readonly batchSize: number,
    countTokens: ((text: string) => number) | undefined,
  ) {
    if (countTokens) this.countTokens = countTokens;
    this.id = identity.id;
    this.dimensions = identity.dimensions;
    this.maxInputTokens = identity.maxInputTokens;
  }

  /** Starts the workers now; the pool's identity is what they report. */
  static async start(spec: EmbedderModuleSpec, options: EmbeddingPoolOptions = {}): Promise<EmbeddingPool> {
    const workers = options.workers ?? os.availableParallelism();
    const startWorkers = workersStarter(spec, { ...options, workers });
    const pool = await startWorkers();
    const embedder = new EmbeddingPool(startWorkers, pool.info, workers, options.batchSize ?? 32, options.countTokens);
    embedder.pool = pool;
    return embedder;
  }

  /**
   * Starts the workers at the first `embed`, for a model whose identity is known without loading
   * it (the bundled one): a server that has not embedded anything yet holds no model. Each worker
   * holds a copy of the model and its runtime: ~140 MB resident for the bundled one after a first
   * text, more once long texts have grown its wasm heap. The workers
   * must report `identity`, or the first `embed` fails (and the next tries again).
   */
  static lazy(spec: EmbedderModuleSpec, identity: EmbedderIdentity, options: EmbeddingPoolOptions = {}): EmbeddingPool {
    const workers = options.workers ?? os.availableParallelism();
    return new EmbeddingPool(workersStarter(spec, { ...options, workers }), identity, workers, options.batchSize ?? 32, options.countTokens);
  }

  /** Live workers, including those still starting; before a lazy pool starts, the most it may run. */
  get size(): number {
    return this.pool ? this.pool.size : this.closed ? 0 : this.workers;
  }

  /** A lazy pool not started yet counts as alive: its first call starts it, or fails and retries. */
  alive(): boolean {
    return this.size > 0;
  }

  /** Whether the workers were started. */
  get started(): boolean {
    return this.pool !== undefined;
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<number[][]> {
    if (this.closed) throw new Error('EmbeddingPool is closed');
    options.signal?.throwIfAborted();
    if (texts.length === 0) return [];
    const pool = this.pool ?? (await this.startOnce());

    // A call smaller than workers x batchSize is cut finer so that every worker the pool may run
    // gets a share (a share that finds the others busy starts one); batch size barely moves
    // single-thread throughput, idle workers do.
    const batchSize = Math.min(this.batchSize, Math.ceil(texts.length / this.workers));
    const shares = splitIntoBatches(texts, batchSize);
    const batches = await pool.runAll(shares, {
      signal: options.signal,
      urgent: options.urgent,
      ...(options.bulk && shares.length > 1 && { room: OWN_WORKER_ROOM }),
    });
    return batches.flatMap(({ count, vectors }) => unflatten(vectors, count, this.dimensions));
  }

  private startOnce(): Promise<Workers> {
    this.starting ??= this.startWorkers().then(
      async (pool) => {
        const { id, dimensions, maxInputTokens } = pool.info;
        if (this.closed || id !== this.id || dimensions !== this.dimensions || maxInputTokens !== this.maxInputTokens) {
          await pool.close();
          this.starting = undefined;
          throw new Error(
            this.closed
              ? 'EmbeddingPool is closed'
              : `the embedding workers report ${id} (${dimensions} dimensions), not the expected ${this.id} (${this.dimensions})`,
          );
        }
        this.pool = pool;
        return pool;
      },
      (err: unknown) => {
        this.starting = undefined;
        throw err;
      },
    );
    return this.starting;
  }

  async close(): Promise<void> {
    this.closed = true;
    const pool = this.pool ?? (await this.starting?.catch(() => undefined));
    await pool?.close();
  }
}

type Workers = WorkerPool<string[], EmbeddedBatch, EmbedderIdentity, EmbeddingWorkerInit>;

function workersStarter(spec: EmbedderModuleSpec, options: EmbeddingPoolOptions & { workers: number }): () => Promise<Workers> {
  const { workers } = options;
  return async () => {
    const pool = await WorkerPool.start<string[], EmbeddedBatch, EmbedderIdentity, EmbeddingWorkerInit>({
      entryUrl: siblingModuleUrl('embedding-worker'),
      init: { spec },
      workers,
      minWorkers: Math.min(workers, options.minWorkers ?? defaultMinWorkers(workers)),
      tasksPerWorker: TASKS_PER_WORKER,
      roomFor: (texts: string[]) => (texts.length >= BIG_BATCH_TEXTS ? OWN_WORKER_ROOM : TASKS_PER_WORKER),
      maxFailedRestarts: options.maxFailedRestarts ?? 3,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
      ...(options.niceness && { niceness: options.niceness }),
      name: 'EmbeddingPool',
      workerName: 'embedding worker',
      crashedError: EmbeddingWorkerCrashedError,
    });
    return pool;
  };
}

export function createEmbeddingPool(spec: EmbedderModuleSpec, options: EmbeddingPoolOptions = {}): Promise<EmbeddingPool> {
  return EmbeddingPool.start(spec, options);
}

function unflatten(flat: Float64Array, count: number, dimensions: number): number[][] {
  return Array.from({ length: count }, (_, i) => Array.from(flat.subarray(i * dimensions, (i + 1) * dimensions)));
}
