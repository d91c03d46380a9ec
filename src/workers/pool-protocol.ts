import type { SerializedError } from './serialized-error.js';

/** What WorkerPool hands each of its worker threads (piscina's workerData). */
export interface PoolWorkerData<Init> {
  init: Init;
  /** The worker thread's niceness, set before its setup runs (see thread-priority.ts). */
  niceness?: number;
}

/**
 * A task's progress, an Int32 on a SharedArrayBuffer both threads see: the worker claims it
 * (QUEUED → STARTED) before running it, the pool abandons it (QUEUED → ABANDONED) when its
 * caller no longer wants it. Whichever exchange comes first wins, so a task abandoned in time
 * is never computed, and a task whose worker died before claiming it can safely go to another.
 */
export const TaskState = { QUEUED: 0, STARTED: 1, ABANDONED: 2 } as const;

export interface TaskEnvelope<Task> {
  /** The states of all tasks of one call (one shared allocation per call, not per task). */
  states: Int32Array;
  /** This task's index in `states`. */
  slot: number;
  task: Task;
  /** Goes ahead of the tasks waiting for a worker that are not (see urgent-first-queue.ts). */
  urgent?: boolean;
}

/**
 * What a worker answers for a task. Failures are answers, not rejections: a rejected piscina
 * task then always means that the worker died (or was stopped) under it.
 */
export type TaskOutcome<Result> = { type: 'done'; result: Result } | { type: 'failed'; error: SerializedError } | { type: 'skipped' };

/** Marks the messages a pool worker posts about itself, among any other its code might post. */
export const POOL_MESSAGE = 'memrag.pool';

/** Posted once per worker, when its setup has finished or failed. */
export type PoolWorkerMessage<Info> =
  | { [POOL_MESSAGE]: 'ready'; threadId: number; info: Info }
  | { [POOL_MESSAGE]: 'init-failed'; threadId: number; error: SerializedError };

export function isPoolWorkerMessage(message: unknown): message is PoolWorkerMessage<unknown> {
  return typeof message === 'object' && message !== null && POOL_MESSAGE in message;
}
