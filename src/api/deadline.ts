import type { HttpError } from './errors.js';

/**
 * Runs `work` with a signal that aborts with `error()` at `ms`, and fails with it at that deadline
 * whether or not the work checks the signal: work that does stops rather than finishing (and
 * committing) behind a reply that said it failed, and work that does not cannot hold the reply.
 * The error is made only at the deadline: most work ends first, and an error's stack costs.
 */
export async function raceDeadline<T>(ms: number, error: () => HttpError, work: (deadline: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Work that checks the signal throws this same error, which answers as the deadline's too.
      const reason = error();
      deadline.abort(reason);
      reject(reason);
    }, ms);
  });
  try {
    return await Promise.race([work(deadline.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}
