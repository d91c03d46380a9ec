import { AsyncLocalStorage } from 'node:async_hooks';

const urgent = new AsyncLocalStorage<true>();

/**
 * Runs `work` as reads a caller is waiting for (a search): on PGlite, whose statements take turns
 * with the event loop's other work, they go to the connection at once (pglite-fair-turns.ts).
 */
export function asUrgentReads<T>(work: () => Promise<T>): Promise<T> {
  return urgent.run(true, work);
}

/** Whether the calling code runs inside `asUrgentReads`. */
export function inUrgentReads(): boolean {
  return urgent.getStore() === true;
}
