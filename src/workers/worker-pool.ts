import type { ResourceLimits, Worker } from 'node:worker_threads';
import { Piscina, queueOptionsSymbol } from 'piscina';
import { moduleWorkerEntry } from '../util/module-worker.js';
import { POOL_MESSAGE, TaskState, isPoolWorkerMessage, type PoolWorkerData, type TaskEnvelope, type TaskOutcome } from './pool-protocol.js';
import { deserializeError } from './serialized-error.js';
import { UrgentFirstQueue } from './urgent-first-queue.js';

type LoadBalancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>;
type PiscinaWorker = Parameters<LoadBalancer>[1][number];

/** The error class a pool rejects with when a worker dies under a task: each user has its own. */
export type WorkerCrashedErrorClass = new (message: string, options?: { cause?: unknown }) => Error;

export interface WorkerPoolOptions<Init, Task = unknown> {
  /** file: URL of the worker entry, whose default export is made by servePoolTasks. */
  entryUrl: string;
  /** Structured-cloneable; every worker's setup gets it. */
  init: Init;
  /** Worker threads, each with its own copy of whatever its setup loads: the most the pool runs. */
  workers: number;
  /**
   * Workers kept running; default `workers`. Past them a worker is started when a task that
   * wants a worker of its own (roomFor below tasksPerWorker) finds none idle, or when every
   * worker is full, and stopped once it has idled for `idleTimeoutMs` (default 30 s).
   */
  minWorkers?: number;
  idleTimeoutMs?: number;
  /**
   * Tasks a worker holds at once. 1: the one it runs. 2: also the next, which it then starts
   * without waiting for this thread to take the result and send more. More: those it holds wait
   * there, urgent ones first, and a service that can runs several of them together (pool-worker.ts).
   */
  tasksPerWorker: number;
  /**
   * Most tasks a worker may hold, this one included, for it to be given `task`, when fewer than
   * tasksPerWorker: a big task held behind others in one worker would wait there while another
   * worker idles (held tasks never move). Default: tasksPerWorker for every task.
   */
  roomFor?(task: Task): number;
  /** Give up replacing workers after this many replacements in a row fail to start. */
  maxFailedRestarts: number;
  /** Each worker's V8 heap limits (node:worker_threads); V8's defaults when absent. */
  resourceLimits?: ResourceLimits;
  /** Each worker thread's niceness on Linux (thread-priority.ts): 0 or absent leaves it as this thread's. */
  niceness?: number;
  /** The pool in error messages, e.g. 'EmbeddingPool'. */
  name: string;
  /** One worker in error messages, e.g. 'embedding worker'. */
  workerName: string;
  crashedError: WorkerCrashedErrorClass;
}

/** A task of a runAll call, from sending to settling. */
interface PendingTask<Task, Result> {
  envelope: TaskEnvelope<Task>;
  resolve(result: Result): void;
  reject(error: unknown): void;
  /** Times sent again because its worker died before starting it. */
  resent: number;
}

/** How long a worker past minWorkers may idle before it stops: a model costs about a second to load again. */
const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

/** A task whose workers keep dying before they start it is failed rather than sent forever. */
const MAX_RESENDS = 3;

/**
 * Worker threads that each set something heavy up once (a model) and then serve tasks, on
 * piscina: it starts the threads, routes tasks and results, wakes idle workers and replaces a
 * worker that dies. This class adds what the models need on top:
 *
 * - start() resolves once every worker has set up, and fails with a worker's setup error;
 * - tasks go only to workers that have set up, idle ones first, first in first out;
 * - a task whose worker dies while running it is rejected with `crashedError`, not retried, since
 *   the same input would most likely kill the next worker too; a task the worker held but had
 *   not started goes to another worker;
 * - a replacement that fails to set up is retried up to `maxFailedRestarts` times in a row; then
 *   the pool gives up, and once no worker is left every waiting task is rejected and `size` is 0;
 * - a call's tasks succeed or fail together: once one fails or the signal aborts, the call is
 *   rejected and its tasks that have not started are dropped (those running finish unused);
 * - close() rejects what is pending and stops the workers without waiting for them.
 *
 * As with piscina alone, idle workers do not keep the process alive; busy or starting ones do.
 */
export interface RunOptions {
  signal?: AbortSignal;
  /** Waits for a worker ahead of the tasks that are not urgent. */
  urgent?: boolean;
  /** The room each of the call's tasks asks for, in place of roomFor's (see WorkerPoolOptions.roomFor). */
  room?: number;
}

export class WorkerPool<Task, Result, Info, Init = unknown> {
  private readonly piscina: Piscina;
  /** Workers that have set up, by thread id: the only ones given tasks. */
  private readonly ready = new Set<number>();
  /** Workers piscina counts as started (it replaces those when they stop). */
  private readonly started = new Set<number>();
  /** Workers whose setup failed: stopped (so that piscina starts another) or kept idle (so that it does not). */
  private readonly failedToStart = new Map<number, 'stop' | 'keep'>();
  private readonly pending = new Set<PendingTask<Task, Result>>();
  private startup: { remaining: number; resolve(): void; reject(error: unknown): void } | undefined;
  private first: Info | undefined;
  private failedRestarts = 0;
  private lastError: Error | undefined;
  private gaveUp: Error | undefined;
  private closing = false;

  private constructor(private readonly options: WorkerPoolOptions<Init, Task>) {
    this.piscina = new Piscina({
      ...moduleWorkerEntry(options.entryUrl),
      workerData: { init: options.init, ...(options.niceness && { niceness: options.niceness }) } satisfies PoolWorkerData<Init>,
      minThreads: options.minWorkers ?? options.workers,
      maxThreads: options.workers,
      idleTimeout: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      concurrentTasksPerWorker: options.tasksPerWorker,
      // A task that found no free worker waits at the head of the queue, not the tail.
      stricterFIFO: true,
      taskQueue: new UrgentFirstQueue(),
      // Piscina shows its balancer a task's queue options, not the task itself.
      loadBalancer: (task, workers) => this.pickWorker(workers, (task as { [queueOptionsSymbol]?: QueueOptions | null })[queueOptionsSymbol]?.room),
      recordTiming: false,
      ...(options.resourceLimits && { resourceLimits: options.resourceLimits }),
    });
    this.piscina.on('message', (message: unknown) => this.onWorkerMessage(message));
    this.piscina.on('workerCreate', (worker: PiscinaWorker) => this.onWorkerStarted(worker.id));
    this.piscina.on('workerDestroy', (worker: PiscinaWorker) => this.onWorkerGone(worker.id));
    // Without a listener, piscina's 'error' (a worker died while idle) would be thrown here.
    this.piscina.on('error', (error: Error) => this.onWorkerError(error));
  }

  static async start<Task, Result, Info, Init>(options: WorkerPoolOptions<Init, Task>): Promise<WorkerPool<Task, Result, Info, Init>> {
    const count = options.minWorkers ?? options.workers;
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new RangeError(`workers must be a positive integer, got ${options.workers}`);
    if (!Number.isInteger(count) || count < 1 || count > options.workers) {
      throw new RangeError(`minWorkers must be an integer from 1 to workers (${options.workers}), got ${count}`);
    }
    const pool = new WorkerPool<Task, Result, Info, Init>(options);
    try {
      await new Promise<void>((resolve, reject) => {
        pool.startup = { remaining: count, resolve, reject };
      });
    } catch (error) {
      await pool.piscina.destroy();
      throw error;
    }
    return pool;
  }

  /** What the workers reported once set up (the first one's; the others must match it). */
  get info(): Info {
    return this.first!;
  }

  /** Live workers, including replacements still setting up. */
  get size(): number {
    if (this.closing || this.gaveUp) return 0;
    return this.piscina.threads.filter((worker) => !this.failedToStart.has(worker.threadId)).length;
  }

  get closed(): boolean {
    return this.closing;
  }

  run(task: Task, options: RunOptions = {}): Promise<Result> {
    return this.runAll([task], options).then(([result]) => result!);
  }

  /**
   * Runs the tasks (in parallel, as workers are free) and resolves with their results in order.
   * The first failure rejects the call, and its tasks that have not started are dropped: the
   * caller wants all of them or none.
   */
  runAll(tasks: readonly Task[], options: RunOptions = {}): Promise<Result[]> {
    const { signal, urgent, room } = options;
    if (this.closing) return Promise.reject(new Error(`${this.options.name} is closed`));
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (tasks.length === 0) return Promise.resolve([]);
    if (this.size === 0) return Promise.reject(this.gaveUp ?? new this.options.crashedError(`${this.options.name} has no workers left`));
    return new Promise<Result[]>((resolve, reject) => {
      const results = new Array<Result>(tasks.length);
      let remaining = tasks.length;
      const fail = (error: unknown) => {
        signal?.removeEventListener('abort', onAbort);
        for (const member of members) this.abandon(member);
        reject(error);
      };
      const onAbort = () => fail(signal!.reason);
      // One state per task, on memory that the workers share (zeroed: TaskState.QUEUED).
      const states = new Int32Array(new SharedArrayBuffer(tasks.length * Int32Array.BYTES_PER_ELEMENT));
      const members = tasks.map(
        (task, slot): PendingTask<Task, Result> => ({
          envelope: withRoom({ states, slot, task, ...(urgent ? { urgent } : {}) }, room ?? this.options.roomFor?.(task)),
          resolve: (result) => {
            results[slot] = result;
            if (--remaining > 0) return;
            signal?.removeEventListener('abort', onAbort);
            resolve(results);
          },
          reject: fail,
          resent: 0,
        }),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      for (const member of members) this.pending.add(member);
      for (const member of members) this.send(member);
    });
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const closed = new Error(`${this.options.name} was closed`);
    for (const task of [...this.pending]) this.settle(task, (t) => t.reject(closed));
    await this.piscina.destroy();
  }

  private send(task: PendingTask<Task, Result>): void {
    this.piscina.run(task.envelope).then(
      (outcome: TaskOutcome<Result>) => {
        if (outcome.type === 'done') this.settle(task, (t) => t.resolve(outcome.result));
        else if (outcome.type === 'failed') this.settle(task, (t) => t.reject(deserializeError(outcome.error)));
        // 'skipped': abandoned before it started, with its call settled then.
      },
      // Failures inside a task come back as outcomes: a rejection means its worker stopped.
      (error: unknown) => this.onWorkerLost(task, error),
    );
  }

  private onWorkerLost(task: PendingTask<Task, Result>, error: unknown): void {
    if (!this.pending.has(task)) return;
    const { states, slot } = task.envelope;
    const unstarted = Atomics.load(states, slot) === TaskState.QUEUED;
    if (unstarted && task.resent < MAX_RESENDS && !this.gaveUp) {
      task.resent += 1;
      this.send(task);
      return;
    }
    const reason = error instanceof Error ? error.message : String(error);
    this.settle(task, (t) => t.reject(new this.options.crashedError(`${this.options.workerName} stopped (${reason})`, { cause: error })));
  }

  /** Forgets a task whose call has been settled; a worker that has not claimed it yet will skip it. */
  private abandon(task: PendingTask<Task, Result>): void {
    const { states, slot } = task.envelope;
    Atomics.compareExchange(states, slot, TaskState.QUEUED, TaskState.ABANDONED);
    this.pending.delete(task);
  }

  private settle(task: PendingTask<Task, Result>, action: (task: PendingTask<Task, Result>) => void): void {
    if (!this.pending.delete(task)) return;
    action(task);
  }

  /**
   * The least busy worker that has set up and has `room` (see roomFor): idle ones first, then one
   * to hold the task. A task that wants a worker of its own gets none (piscina then starts one, up
   * to `workers`) while none is idle and the pool may grow. Other tasks go to the workers the pool
   * keeps (the longest running) while one has room, so that those started for bulk work idle and
   * stop once it is done.
   */
  private pickWorker(workers: PiscinaWorker[], room = this.options.tasksPerWorker): PiscinaWorker | null {
    const limit = Math.min(room, this.options.tasksPerWorker);
    const open = workers.filter((w) => this.ready.has(w.id) && !w.terminating && !w.destroyed && w.currentUsage < limit);
    const leastBusy = (among: PiscinaWorker[]) =>
      among.reduce<PiscinaWorker | null>((best, w) => (best === null || w.currentUsage < best.currentUsage ? w : best), null);
    const wantsOwn = limit < this.options.tasksPerWorker;
    if (wantsOwn) {
      const best = leastBusy(open);
      return best !== null && best.currentUsage > 0 && this.growing() ? null : best;
    }
    const keeps = this.options.minWorkers ?? this.options.workers;
    if (keeps >= this.options.workers) return leastBusy(open);
    // A Set keeps the order its workers started in.
    const kept = new Set([...this.started].slice(0, keeps));
    return leastBusy(open.filter((w) => kept.has(w.id))) ?? leastBusy(open);
  }

  /** Whether a worker is setting up, or one may be started: a task that wants a worker of its own waits for it rather than behind another. */
  private growing(): boolean {
    const threads = this.piscina.threads;
    return threads.length < this.options.workers || threads.some((t) => !this.ready.has(t.threadId) && !this.failedToStart.has(t.threadId));
  }

  private onWorkerMessage(message: unknown): void {
    if (!isPoolWorkerMessage(message) || this.closing || this.gaveUp) return;
    const { threadId } = message;
    if (message[POOL_MESSAGE] === 'init-failed') {
      this.onFailedStart(threadId, deserializeError(message.error));
      return;
    }
    const info = message.info as Info;
    this.first ??= info;
    if (JSON.stringify(info) !== JSON.stringify(this.first)) {
      // A replacement must serve what the pool serves (the model files may have changed on disk).
      this.onFailedStart(threadId, new Error(`worker came up as ${JSON.stringify(info)}, pool is ${JSON.stringify(this.first)}`));
      return;
    }
    this.ready.add(threadId);
    this.failedRestarts = 0;
    if (this.startup && --this.startup.remaining === 0) {
      this.startup.resolve();
      this.startup = undefined;
    }
  }

  private onFailedStart(threadId: number, error: Error): void {
    this.lastError = error;
    if (this.startup) {
      this.startup.reject(error);
      this.startup = undefined;
      return;
    }
    this.failedRestarts += 1;
    const retry = this.failedRestarts < this.options.maxFailedRestarts;
    // Piscina replaces a worker that stops after it has started: stopping this one is the retry.
    // Past the limit it stays, idle and never given a task, so that piscina starts no other.
    this.failedToStart.set(threadId, retry ? 'stop' : 'keep');
    if (retry && this.started.has(threadId)) this.stopThread(threadId);
    if (!retry && this.size === 0) {
      this.giveUp(`${this.options.workerName}s keep failing to start; giving up after ${this.failedRestarts} attempts: ${error.message}`, error);
    }
  }

  private onWorkerStarted(threadId: number): void {
    this.started.add(threadId);
    // Stopped only now: one that stops before piscina counts it as started is not replaced.
    if (this.failedToStart.get(threadId) === 'stop') this.stopThread(threadId);
  }

  private onWorkerGone(threadId: number): void {
    this.ready.delete(threadId);
    this.started.delete(threadId);
    this.failedToStart.delete(threadId);
    if (this.closing || this.gaveUp) return;
    // Piscina starts the replacement right after this event.
    queueMicrotask(() => {
      if (this.closing || this.gaveUp || this.startup) return;
      if (this.piscina.threads.length === 0) {
        this.giveUp(`no ${this.options.workerName} left${this.lastError ? `: ${this.lastError.message}` : ''}`, this.lastError);
      }
    });
  }

  private onWorkerError(error: Error): void {
    this.lastError = error;
    if (this.startup) {
      this.startup.reject(error);
      this.startup = undefined;
    }
  }

  private giveUp(message: string, cause: unknown): void {
    const error = new this.options.crashedError(message, { cause });
    this.gaveUp = error;
    for (const task of [...this.pending]) this.settle(task, (t) => t.reject(error));
    void this.piscina.destroy();
  }

  private stopThread(threadId: number): void {
    void this.threadById(threadId)?.terminate();
  }

  private threadById(threadId: number): Worker | undefined {
    return this.piscina.threads.find((worker) => worker.threadId === threadId);
  }
}

/** What a task tells the load balancer, on its envelope (a symbol key: never sent to the worker). */
interface QueueOptions {
  room: number;
}

function withRoom<Task>(envelope: TaskEnvelope<Task>, room: number | undefined): TaskEnvelope<Task> {
  return room === undefined ? envelope : Object.assign(envelope, { [queueOptionsSymbol]: { room } satisfies QueueOptions });
}
