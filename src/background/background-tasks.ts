import { setMaxListeners } from 'node:events';
/**
 * Work that runs after a reply has gone out (a chat turn's after-turn hooks, such as checkpoint
 * writing), tracked so that it runs once per key, can be awaited (tests, benchmarks) and is
 * aborted and drained at shutdown instead of racing the database's close.
 */
export interface BackgroundTasks {
  /** Starts `task` unless one with the same key is running; false when it was already running or closed. */
  run(key: string, task: (signal: AbortSignal) => Promise<void>): boolean;
  has(key: string): boolean;
  /** Resolves when nothing is running, including tasks started while waiting. */
  whenIdle(): Promise<void>;
  /**
   * Resolves when no task whose key `matches` is running (those started while waiting included),
   * or after `timeoutMs`: true when they settled, false when the time ran out.
   */
  whenSettled(matches: (key: string) => boolean, timeoutMs: number): Promise<boolean>;
  /** Refuses new tasks, aborts the running ones and waits for them to settle. */
  close(): Promise<void>;
}

export function createBackgroundTasks(onError: (key: string, error: unknown) => void = () => {}): BackgroundTasks {
  const running = new Map<string, Promise<void>>();
  const controller = new AbortController();
  // Every running task (an extraction's LLM call, say) listens to this one signal: under load more
  // than Node's default of 10 at once, which is no leak.
  setMaxListeners(0, controller.signal);
  let closed = false;

  const run: BackgroundTasks['run'] = (key, task) => {
    if (closed || running.has(key)) return false;
    // Started at once (an async function runs up to its first await), so a close right after
    // `run` finds the task listening to its signal.
    const done = (async () => task(controller.signal))()
      .catch((error: unknown) => {
        if (!controller.signal.aborted) onError(key, error);
      })
      .finally(() => running.delete(key));
    running.set(key, done);
    return true;
  };

  const whenIdle = async () => {
    while (running.size > 0) await Promise.all(running.values());
  };

  const whenSettled: BackgroundTasks['whenSettled'] = async (matches, timeoutMs) => {
    const pending = () => [...running].filter(([key]) => matches(key)).map(([, done]) => done);
    if (pending().length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const settled = (async () => {
      for (let waiting = pending(); waiting.length > 0; waiting = pending()) await Promise.all(waiting);
      return true as const;
    })();
    try {
      return await Promise.race([settled, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    run,
    has: (key) => running.has(key),
    whenIdle,
    whenSettled,
    async close() {
      closed = true;
      controller.abort(new Error('shutting down'));
      await whenIdle();
    },
  };
}
