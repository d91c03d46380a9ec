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
import { niceThisThread } from './thread-priority.js';

export interface PoolWorkerService<Info, Task, Result> {
  /** Told to the pool once set up; every worker of a pool must report the same. */
  info: Info;
  run(task: Task): Promise<Result>;
  /**
   * For work with a fixed cost per call (a model's forward pass): the tasks a worker holds, of
   * the same urgency and as many as `fits` admits, run as one, with their results in order. A
   * failed run is retried task by task, so that only the task that caused it fails.
   */
  together?: {
    fits(tasks: readonly Task[]): boolean;
    /** One result per task, in order; results share no buffer (each is transferred on its own). */
    run(tasks: Task[]): Promise<Result[]>;
  };
  /** Buffers of a result to move to the pool's thread rather than copy (they are unusable here afterwards). */
  transfer?(result: Result): ArrayBuffer[];
}

/** A task handed to this worker and not yet answered. */
interface Held<Task> {
  envelope: TaskEnvelope<Task>;
  answer(outcome: unknown): void;
}

export type PoolTaskHandler<Task> = (envelope: TaskEnvelope<Task>) => Promise<unknown>;

export async function servePoolTasks<Init, Info, Task, Result>(
  setup: (init: Init) => Promise<PoolWorkerService<Info, Task, Result>>,
): Promise<PoolTaskHandler<Task>> {
  const port = parentPort;
  if (!port) throw new Error('servePoolTasks must run in a worker thread');
  const tell = (message: PoolWorkerMessage<Info>) => port.postMessage(message);

  const { init, niceness } = workerData as PoolWorkerData<Init>;
  if (niceness) niceThisThread(niceness);
  let service: PoolWorkerService<Info, Task, Result>;
  try {
    service = await setup(init);
  } catch (error) {
    tell({ [POOL_MESSAGE]: 'init-failed', threadId, error: serializeError(error) });
    // The module still loads: piscina stops replacing any worker once one fails while loading,
    // while the pool decides itself whether to retry. It never gives this worker a task.
    return async () => {
      throw new Error('this worker failed to start');
    };
  }
  tell({ [POOL_MESSAGE]: 'ready', threadId, info: service.info });

  // Piscina hands a worker its next tasks while it runs one. They wait here, urgent ones first,
  // and run one after the other, or several at once where the service can.
  const held: Held<Task>[] = [];
  let running = false;
  const drain = async () => {
    if (running) return;
    running = true;
    try {
      for (let next = claimNext(service, held); next.length > 0; next = claimNext(service, held)) await runClaimed(service, next);
    } finally {
      running = false;
    }
  };
  return (envelope) =>
    new Promise((answer) => {
      const at = envelope.urgent ? held.findIndex((h) => !h.envelope.urgent) : -1;
      held.splice(at < 0 ? held.length : at, 0, { envelope, answer });
      void drain();
    });
}

/**
 * The next tasks to run, claimed (QUEUED → STARTED): the first held task that nobody abandoned,
 * and after it, where the service runs tasks together, those of the same urgency that fit with it.
 */
function claimNext<Task>(service: PoolWorkerService<unknown, Task, unknown>, held: Held<Task>[]): Held<Task>[] {
  const claimed: Held<Task>[] = [];
  while (held.length > 0) {
    const next = held[0]!;
    const { states, slot } = next.envelope;
    // Abandoned while it waited (its call failed or was aborted, or the pool closed): nobody wants it.
    if (Atomics.load(states, slot) !== TaskState.QUEUED) {
      held.shift();
      next.answer({ type: 'skipped' } satisfies TaskOutcome<unknown>);
      continue;
    }
    if (claimed.length > 0 && !(sameUrgency(claimed[0]!, next) && fitsTogether(service, [...claimed, next]))) break;
    held.shift();
    if (Atomics.compareExchange(states, slot, TaskState.QUEUED, TaskState.STARTED) !== TaskState.QUEUED) {
      next.answer({ type: 'skipped' } satisfies TaskOutcome<unknown>);
      continue;
    }
    claimed.push(next);
    if (!service.together) break;
  }
  return claimed;
}

const sameUrgency = (a: Held<unknown>, b: Held<unknown>) => Boolean(a.envelope.urgent) === Boolean(b.envelope.urgent);

function fitsTogether<Task>(service: PoolWorkerService<unknown, Task, unknown>, tasks: Held<Task>[]): boolean {
  try {
    return service.together?.fits(tasks.map((h) => h.envelope.task)) === true;
  } catch {
    return false;
  }
}

async function runClaimed<Task, Result>(service: PoolWorkerService<unknown, Task, Result>, claimed: Held<Task>[]): Promise<void> {
  if (claimed.length > 1 && service.together) {
    try {
      const results = await service.together.run(claimed.map((h) => h.envelope.task));
      if (results.length !== claimed.length) throw new Error(`ran ${claimed.length} tasks together and got ${results.length} results`);
      const outcomes = results.map((result) => done(service, result));
      claimed.forEach((h, i) => h.answer(outcomes[i]));
      return;
    } catch {
      // Which task failed the joint run is unknown: each runs alone, and fails alone if it must.
    }
  }
  for (const h of claimed) h.answer(await runAlone(service, h.envelope));
}

async function runAlone<Task, Result>(service: PoolWorkerService<unknown, Task, Result>, { states, task }: TaskEnvelope<Task>): Promise<unknown> {
  try {
    return done(service, await service.run(task));
  } catch (error) {
    // The call fails with this task, so its other tasks are abandoned here, before the answer
    // leaves: piscina may hand this worker the call's next task before the pool's thread has
    // read the failure, and the worker must then already see that nobody wants it.
    for (let other = 0; other < states.length; other++) Atomics.compareExchange(states, other, TaskState.QUEUED, TaskState.ABANDONED);
    return { type: 'failed', error: serializeError(error) } satisfies TaskOutcome<Result>;
  }
}

function done<Result>(service: PoolWorkerService<unknown, unknown, Result>, result: Result): unknown {
  const outcome: TaskOutcome<Result> = { type: 'done', result };
  const buffers = service.transfer?.(result) ?? [];
  return buffers.length > 0 ? move({ [transferableSymbol]: buffers, [valueSymbol]: outcome }) : outcome;
}
