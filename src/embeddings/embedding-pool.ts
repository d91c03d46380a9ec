import os from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../workers/module-worker.js';
import type { Embedder } from './embedder.js';
import { siblingModuleUrl, type EmbedderModuleSpec } from './embedder-module-spec.js';
import { deserializeError, serializeError, type FromWorker, type ToWorker, type WorkerInit } from './embedding-worker-protocol.js';
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

interface Task {
  id: number;
  texts: string[];
  resolve(vectors: number[][]): void;
  reject(error: unknown): void;
  /** Settled from outside (abort, a sibling batch failed, close): skip it or drop its result. */
  abandoned: boolean;
}

interface Slot {
  worker: Worker;
  /** `ready`: started and serving, with `tasks.length` tasks sent to it. */
  state: 'starting' | 'ready' | 'gone';
  /** Sent to the worker and not answered yet, oldest first: the worker serves them in order. */
  tasks: Task[];
  lastError?: Error;
  ready: Deferred<void>;
}

interface Identity {
  id: string;
  dimensions: number;
  maxInputTokens: number;
}

let nextTaskId = 1;

/**
 * Tasks a worker holds at once: the one it computes and the next. With only one, a worker that
 * finishes waits until this thread takes its result and sends more, and during ingestion this
 * thread is often busy for milliseconds at a time (PGlite's statements run on it).
 */
const TASKS_PER_WORKER = 2;

/**
 * Runs a local embedder in a pool of worker threads, for real parallelism: the bundled model's
 * wasm backend computes on one core per thread. Calls are split into batches, spread over idle
 * workers and reassembled in order. A worker that crashes is replaced; its batch is rejected,
 * not retried, since the same input would most likely crash the next worker too.
 */
export class EmbeddingPool implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly maxInputTokens: number;
  readonly countTokens?: (text: string) => number;
  private readonly slots = new Set<Slot>();
  private readonly queue: Task[] = [];
  private failedRestarts = 0;
  private closing = false;

  private constructor(
    private readonly spec: EmbedderModuleSpec,
    private readonly batchSize: number,
    private readonly maxFailedRestarts: number,
    identity: Identity,
    firstSlots: Slot[],
    countTokens: ((text: string) => number) | undefined,
  ) {
    if (countTokens) this.countTokens = countTokens;
    this.id = identity.id;
    this.dimensions = identity.dimensions;
    this.maxInputTokens = identity.maxInputTokens;
    for (const slot of firstSlots) this.slots.add(slot);
  }

  static async start(spec: EmbedderModuleSpec, options: EmbeddingPoolOptions = {}): Promise<EmbeddingPool> {
    const count = options.workers ?? os.availableParallelism();
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`workers must be a positive integer, got ${count}`);
    let pool: EmbeddingPool | undefined;
    let identity: Identity | undefined;
    const slots: Slot[] = [];
    const onMessage = (slot: Slot, message: FromWorker) => {
      if (pool) return pool.onMessage(slot, message);
      if (message.type === 'ready') identity ??= { id: message.id, dimensions: message.dimensions, maxInputTokens: message.maxInputTokens };
      settleStartup(slot, message);
    };
    const onExit = (slot: Slot, code: number) => {
      if (pool) return pool.onExit(slot, code);
      slot.state = 'gone';
      slot.ready.reject(exitError(slot, code));
    };
    for (let i = 0; i < count; i++) slots.push(spawnSlot(spec, onMessage, onExit));
    try {
      await Promise.all(slots.map((s) => s.ready.promise));
      const died = slots.find((s) => s.state === 'gone');
      if (died) throw exitError(died, 1);
    } catch (error) {
      await Promise.all(slots.map((s) => s.worker.terminate()));
      throw error;
    }
    pool = new EmbeddingPool(spec, options.batchSize ?? 32, options.maxFailedRestarts ?? 3, identity!, slots, options.countTokens);
    for (const slot of slots) if (slot.state === 'ready') slot.worker.unref();
    return pool;
  }

  /** Live workers, including replacements still starting. */
  get size(): number {
    return this.slots.size;
  }

  async embed(texts: string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    if (this.closing) throw new Error('EmbeddingPool is closed');
    const { signal } = options;
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    if (this.slots.size === 0) throw new Error('EmbeddingPool has no workers left');

    // A call smaller than workers x batchSize is cut finer so that every worker gets a share;
    // batch size barely moves single-thread throughput, idle workers do.
    const batchSize = Math.min(this.batchSize, Math.ceil(texts.length / Math.max(1, this.slots.size)));
    const tasks: Task[] = [];
    const promises = splitIntoBatches(texts, batchSize).map(
      (batch) =>
        new Promise<number[][]>((resolve, reject) => {
          const task: Task = { id: nextTaskId++, texts: batch, resolve, reject, abandoned: false };
          tasks.push(task);
          this.queue.push(task);
        }),
    );
    // Once the call has failed (or is aborted) its remaining batches are wasted work.
    const abandonAll = (reason: unknown) => {
      for (const task of tasks) {
        if (task.abandoned) continue;
        task.abandoned = true;
        task.reject(reason);
      }
    };
    const onAbort = () => abandonAll(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    this.dispatch();
    try {
      const batches = await Promise.all(
        promises.map((p) =>
          p.catch((error: unknown) => {
            abandonAll(error);
            throw error;
          }),
        ),
      );
      return batches.flat();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.dropAbandoned();
    }
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const closed = new Error('EmbeddingPool was closed');
    for (const task of this.queue.splice(0)) settle(task, (t) => t.reject(closed));
    const slots = [...this.slots];
    for (const slot of slots) for (const task of slot.tasks.splice(0)) settle(task, (t) => t.reject(closed));
    await Promise.all(slots.map((s) => s.worker.terminate()));
    this.slots.clear();
  }

  private dispatch(): void {
    this.dropAbandoned();
    // Idle workers first, then a next task to each busy one.
    for (let held = 0; held < TASKS_PER_WORKER; held++) {
      for (const slot of this.slots) {
        if (this.queue.length === 0) return;
        if (slot.state !== 'ready' || slot.tasks.length !== held) continue;
        const task = this.queue.shift()!;
        slot.tasks.push(task);
        slot.worker.ref();
        slot.worker.postMessage({ type: 'embed', taskId: task.id, texts: task.texts } satisfies ToWorker);
      }
    }
  }

  private dropAbandoned(): void {
    for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]!.abandoned) this.queue.splice(i, 1);
  }

  private onMessage(slot: Slot, message: FromWorker): void {
    switch (message.type) {
      case 'ready':
        if (message.id !== this.id || message.dimensions !== this.dimensions) {
          // A replacement must serve the pool's vector space (the model files may have changed on disk).
          const error = new Error(
            `worker came up as ${message.id} (${message.dimensions} dims), pool is ${this.id} (${this.dimensions} dims)`,
          );
          settleStartup(slot, { type: 'init-failed', error: serializeError(error) });
          return;
        }
        settleStartup(slot, message);
        this.failedRestarts = 0;
        this.serveNext(slot);
        return;
      case 'init-failed':
        settleStartup(slot, message);
        return;
      case 'result':
      case 'failed': {
        const task = slot.tasks[0];
        if (!task || message.taskId !== task.id) return;
        slot.tasks.shift();
        if (message.type === 'failed') settle(task, (t) => t.reject(deserializeError(message.error)));
        else settle(task, (t) => t.resolve(unflatten(message.vectors, message.count, this.dimensions)));
        this.serveNext(slot);
        return;
      }
    }
  }

  /** After a worker started or answered: gives it more work, or lets the process exit without it. */
  private serveNext(slot: Slot): void {
    if (slot.state === 'gone') return;
    slot.state = 'ready';
    this.dispatch();
    if (slot.tasks.length === 0) slot.worker.unref();
  }

  private onExit(slot: Slot, code: number): void {
    const wasStarting = slot.state === 'starting';
    slot.state = 'gone';
    this.slots.delete(slot);
    const error = exitError(slot, code);
    slot.ready.reject(error);
    // The batch it was computing is rejected; the next one it held never started, and goes back
    // to the front of the queue for the other workers or the replacement.
    const [crashed, ...unstarted] = slot.tasks.splice(0);
    if (crashed) settle(crashed, (t) => t.reject(error));
    if (this.closing) return;
    this.queue.unshift(...unstarted);

    if (wasStarting) this.failedRestarts += 1;
    if (this.failedRestarts < this.maxFailedRestarts) {
      this.slots.add(spawnSlot(this.spec, (s, m) => this.onMessage(s, m), (s, c) => this.onExit(s, c)));
    } else if (this.slots.size === 0) {
      const fatal = new EmbeddingWorkerCrashedError(
        `embedding workers keep failing to start; giving up after ${this.failedRestarts} attempts: ${error.message}`,
        { cause: error },
      );
      for (const task of this.queue.splice(0)) settle(task, (t) => t.reject(fatal));
    }
    this.dispatch();
  }
}

export function createEmbeddingPool(spec: EmbedderModuleSpec, options: EmbeddingPoolOptions = {}): Promise<EmbeddingPool> {
  return EmbeddingPool.start(spec, options);
}

function spawnSlot(
  spec: EmbedderModuleSpec,
  onMessage: (slot: Slot, message: FromWorker) => void,
  onExit: (slot: Slot, code: number) => void,
): Slot {
  const worker = createWorker(spec);
  const slot: Slot = { worker, state: 'starting', tasks: [], ready: deferred() };
  // Startup failures are reported through ready; nobody may be awaiting it for a replacement.
  slot.ready.promise.catch(() => undefined);
  worker.on('message', (message: FromWorker) => onMessage(slot, message));
  worker.on('error', (error) => {
    slot.lastError = error;
  });
  worker.on('exit', (code) => onExit(slot, code));
  return slot;
}

function createWorker(spec: EmbedderModuleSpec): Worker {
  const init: WorkerInit = { spec };
  return startModuleWorker(siblingModuleUrl('embedding-worker'), init);
}

function settleStartup(slot: Slot, message: FromWorker): void {
  if (message.type === 'ready') {
    slot.state = 'ready';
    slot.ready.resolve();
  } else if (message.type === 'init-failed') {
    slot.lastError = deserializeError(message.error);
    slot.ready.reject(slot.lastError);
    void slot.worker.terminate();
  }
}

function settle(task: Task, action: (task: Task) => void): void {
  if (task.abandoned) return;
  task.abandoned = true;
  action(task);
}

function exitError(slot: Slot, code: number): Error {
  const reason = slot.lastError ? slot.lastError.message : `exit code ${code}`;
  return new EmbeddingWorkerCrashedError(`embedding worker stopped (${reason})`, { cause: slot.lastError });
}

function unflatten(flat: Float64Array, count: number, dimensions: number): number[][] {
  return Array.from({ length: count }, (_, i) => Array.from(flat.subarray(i * dimensions, (i + 1) * dimensions)));
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
