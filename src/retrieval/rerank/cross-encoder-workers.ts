import type { Worker } from 'node:worker_threads';
import { deserializeError } from '../../embeddings/embedding-worker-protocol.js';
import { siblingUrl, startModuleWorker } from '../../workers/module-worker.js';
import type { CrossEncoderModelOptions, CrossEncoderScorer } from './cross-encoder-model.js';
import type { CrossEncoderWorkerInit, FromCrossEncoderWorker, ToCrossEncoderWorker } from './cross-encoder-worker-protocol.js';

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

interface Task {
  id: number;
  query: string;
  passages: string[];
  resolve(scores: number[]): void;
  reject(error: unknown): void;
  /** Settled from outside (abort, close): skip it or drop its result. */
  settled: boolean;
}

interface Slot {
  worker: Worker;
  state: 'starting' | 'idle' | 'busy' | 'gone';
  task?: Task | undefined;
  lastError?: Error;
  ready: Promise<{ id: string; maxLength: number }>;
}

let nextTaskId = 1;

/**
 * A cross-encoder in worker threads: onnxruntime-node runs a session synchronously, which in the
 * server's thread would stall every other request for as long as a batch takes. Batches queue
 * first in, first out and go to idle workers; a worker that crashes is replaced and its batch
 * rejected (the same input would most likely crash the next one too).
 */
export class CrossEncoderWorkers implements CrossEncoderScorer {
  private readonly slots = new Set<Slot>();
  private readonly queue: Task[] = [];
  private failedRestarts = 0;
  private closing = false;

  private constructor(
    readonly id: string,
    readonly maxLength: number,
    private readonly options: CrossEncoderWorkersOptions,
  ) {}

  get parallelism(): number {
    return Math.max(1, this.slots.size);
  }

  static async start(options: CrossEncoderWorkersOptions): Promise<CrossEncoderWorkers> {
    const count = options.workers ?? 1;
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`workers must be a positive integer, got ${count}`);
    let host: CrossEncoderWorkers | undefined;
    const slots = Array.from({ length: count }, () =>
      spawnSlot(
        options,
        (slot, message) => host?.onMessage(slot, message),
        (slot, code) => host?.onExit(slot, code),
      ),
    );
    let first: { id: string; maxLength: number };
    try {
      [first] = (await Promise.all(slots.map((s) => s.ready))) as [{ id: string; maxLength: number }];
    } catch (error) {
      await Promise.all(slots.map((s) => s.worker.terminate()));
      throw error;
    }
    host = new CrossEncoderWorkers(first.id, first.maxLength, options);
    for (const slot of slots) {
      host.slots.add(slot);
      // A slot that died between its ready message and now is replaced like any other.
      if (slot.state === 'gone') host.onExit(slot, 1);
      else slot.worker.unref();
    }
    return host;
  }

  score(query: string, passages: readonly string[], options: { signal?: AbortSignal | undefined } = {}): Promise<number[]> {
    if (this.closing) return Promise.reject(new Error('CrossEncoderWorkers is closed'));
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (passages.length === 0) return Promise.resolve([]);
    if (this.slots.size === 0) return Promise.reject(new CrossEncoderWorkerCrashedError('no cross-encoder workers left'));
    return new Promise<number[]>((resolve, reject) => {
      const onAbort = () => settle(task, (t) => t.reject(signal!.reason));
      const task: Task = {
        id: nextTaskId++,
        query,
        passages: [...passages],
        resolve: (scores) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(scores);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
        settled: false,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(task);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const closed = new Error('CrossEncoderWorkers was closed');
    for (const task of this.queue.splice(0)) settle(task, (t) => t.reject(closed));
    const slots = [...this.slots];
    for (const slot of slots) if (slot.task) settle(slot.task, (t) => t.reject(closed));
    this.slots.clear();
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.state !== 'idle') continue;
      let task = this.queue.shift();
      // Aborted while waiting: never sent.
      while (task?.settled) task = this.queue.shift();
      if (!task) return;
      slot.state = 'busy';
      slot.task = task;
      slot.worker.ref();
      slot.worker.postMessage({ type: 'score', taskId: task.id, query: task.query, passages: task.passages } satisfies ToCrossEncoderWorker);
    }
  }

  private onMessage(slot: Slot, message: FromCrossEncoderWorker): void {
    if (message.type === 'ready') {
      this.failedRestarts = 0;
      this.becomeIdle(slot);
      return;
    }
    if (message.type === 'init-failed') return;
    const task = slot.task;
    if (!task || message.taskId !== task.id) return;
    slot.task = undefined;
    if (message.type === 'failed') settle(task, (t) => t.reject(deserializeError(message.error)));
    else settle(task, (t) => t.resolve(Array.from(message.scores)));
    this.becomeIdle(slot);
  }

  private becomeIdle(slot: Slot): void {
    if (slot.state === 'gone') return;
    slot.state = 'idle';
    this.dispatch();
    // Idle workers must not keep the process alive.
    if (slot.state === 'idle') slot.worker.unref();
  }

  private onExit(slot: Slot, code: number): void {
    const wasStarting = slot.state === 'starting';
    slot.state = 'gone';
    if (!this.slots.delete(slot)) return;
    const error = exitError(slot, code);
    if (slot.task) settle(slot.task, (t) => t.reject(error));
    slot.task = undefined;
    if (this.closing) return;

    if (wasStarting) this.failedRestarts += 1;
    if (this.failedRestarts < (this.options.maxFailedRestarts ?? 3)) {
      this.slots.add(
        spawnSlot(
          this.options,
          (s, m) => this.onMessage(s, m),
          (s, c) => this.onExit(s, c),
        ),
      );
    } else if (this.slots.size === 0) {
      const fatal = new CrossEncoderWorkerCrashedError(
        `cross-encoder workers keep failing to start; giving up after ${this.failedRestarts} attempts: ${error.message}`,
        { cause: error },
      );
      for (const task of this.queue.splice(0)) settle(task, (t) => t.reject(fatal));
    }
  }
}

export function startCrossEncoderWorkers(options: CrossEncoderWorkersOptions): Promise<CrossEncoderWorkers> {
  return CrossEncoderWorkers.start(options);
}

function spawnSlot(
  options: CrossEncoderWorkersOptions,
  onMessage: (slot: Slot, message: FromCrossEncoderWorker) => void,
  onExit: (slot: Slot, code: number) => void,
): Slot {
  const { workers: _workers, maxFailedRestarts: _restarts, ...modelOptions } = options;
  const init: CrossEncoderWorkerInit = { options: modelOptions };
  const worker = startModuleWorker(siblingUrl(import.meta.url, 'cross-encoder-worker'), init);
  let markReady!: (identity: { id: string; maxLength: number }) => void;
  let markFailed!: (error: Error) => void;
  const slot: Slot = {
    worker,
    state: 'starting',
    ready: new Promise((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    }),
  };
  // Startup failures of replacements are reported through onExit; nobody awaits their ready.
  slot.ready.catch(() => undefined);
  worker.on('message', (message: FromCrossEncoderWorker) => {
    if (message.type === 'ready') {
      if (slot.state === 'starting') slot.state = 'idle';
      markReady({ id: message.id, maxLength: message.maxLength });
    } else if (message.type === 'init-failed') {
      slot.lastError = deserializeError(message.error);
      markFailed(slot.lastError);
      void worker.terminate();
    }
    onMessage(slot, message);
  });
  worker.on('error', (error) => {
    slot.lastError = error;
  });
  worker.on('exit', (code) => {
    markFailed(exitError(slot, code));
    onExit(slot, code);
  });
  return slot;
}

function settle(task: Task, action: (task: Task) => void): void {
  if (task.settled) return;
  task.settled = true;
  action(task);
}

function exitError(slot: Slot, code: number): Error {
  const reason = slot.lastError ? slot.lastError.message : `exit code ${code}`;
  return new CrossEncoderWorkerCrashedError(`cross-encoder worker stopped (${reason})`, { cause: slot.lastError });
}
