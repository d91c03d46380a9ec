/**
 * The worker-thread half of WorkerPool. A worker entry module sets itself up and exports the
 * task handler piscina calls:
 *
 *   export default await servePoolTasks(async (init: MyInit) => ({ info, run, transfer }));
 */
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { POOL_MESSAGE, TaskState, type PoolWorkerData, type PoolWorkerMessage, type TaskEnvelope, type TaskOutcome } from './pool-protocol.js';
import { serializeError } from './serialized-error.js';

export interface PoolWorkerService<Info, Task, Result> {
  /** Told to the pool once set up; every worker of a pool must report the same. */
  info: Info;
  run(task: Task): Promise<Result>;
  /** Buffers of a result to move to the pool's thread rather than copy (they are unusable here afterwards). */
  transfer?(result: Result): ArrayBuffer[];
}

export type PoolTaskHandler<Task> = (envelope: TaskEnvelope<Task>) => Promise<unknown>;

export async function servePoolTasks<Init, Info, Task, Result>(
  setup: (init: Init) => Promise<PoolWorkerService<Info, Task, Result>>,
): Promise<PoolTaskHandler<Task>> {
  const port = parentPort;
  if (!port) throw new Error('servePoolTasks must run in a worker thread');
  const tell = (message: PoolWorkerMessage<Info>) => port.postMessage(message);

  let service: PoolWorkerService<Info, Task, Result>;
  try {
    service = await setup((workerData as PoolWorkerData<Init>).init);
  } catch (error) {
    tell({ [POOL_MESSAGE]: 'init-failed', threadId, error: serializeError(error) });
    // The module still loads: piscina stops replacing any worker once one fails while loading,
    // while the pool decides itself whether to retry. It never gives this worker a task.
    return async () => {
      throw new Error('this worker failed to start');
    };
  }
  tell({ [POOL_MESSAGE]: 'ready', threadId, info: service.info });

  // Piscina hands a worker its next task while it runs one; they run one after the other.
  let previous: Promise<unknown> = Promise.resolve();
  return (envelope) => {
    const outcome = previous.then(() => runClaimed(service, envelope));
    previous = outcome;
    return outcome;
  };
}

async function runClaimed<Task, Result>(service: PoolWorkerService<unknown, Task, Result>, { states, slot, task }: TaskEnvelope<Task>): Promise<unknown> {
  // Abandoned while it waited (its call failed or was aborted, or the pool closed): nobody wants it.
  if (Atomics.compareExchange(states, slot, TaskState.QUEUED, TaskState.STARTED) !== TaskState.QUEUED) {
    return { type: 'skipped' } satisfies TaskOutcome<Result>;
  }
  try {
    const result = await service.run(task);
    const outcome: TaskOutcome<Result> = { type: 'done', result };
    const buffers = service.transfer?.(result) ?? [];
    return buffers.length > 0 ? move({ [transferableSymbol]: buffers, [valueSymbol]: outcome }) : outcome;
  } catch (error) {
    // The call fails with this task, so its other tasks are abandoned here, before the answer
    // leaves: piscina may hand this worker the call's next task before the pool's thread has
    // read the failure, and the worker must then already see that nobody wants it.
    for (let other = 0; other < states.length; other++) Atomics.compareExchange(states, other, TaskState.QUEUED, TaskState.ABANDONED);
    return { type: 'failed', error: serializeError(error) } satisfies TaskOutcome<Result>;
  }
}
