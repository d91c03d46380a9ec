import type { MiddlewareHandler } from 'hono';
import { httpRequestsShed } from '../../observability/metrics.js';
import { errorBody } from '../errors.js';

export interface ConcurrencyLimitOptions {
  /** Requests run at once; the rest wait in arrival order. */
  maxInFlight: number;
  /** Requests that may wait; one more is answered 503 at once. */
  maxQueued: number;
  /** How long a request may wait for its turn before it is answered 503. */
  queueTimeoutMs: number;
}

interface Waiter {
  admit(): void;
}

/**
 * Bounded admission: at most `maxInFlight` requests run, at most `maxQueued` wait, and none waits
 * longer than `queueTimeoutMs`. Past either bound the answer is 503 `overloaded` with
 * `Retry-After`, at once, rather than a request queued until it would time out anyway, holding
 * its client and adding to every later request's wait. A waiting request whose client hangs up
 * leaves the queue without running. A request counts until its handler has answered (for a
 * stream, until its headers).
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): MiddlewareHandler {
  const { maxInFlight, maxQueued, queueTimeoutMs } = options;
  const retryAfter = String(Math.max(1, Math.ceil(queueTimeoutMs / 1000)));
  const queue: Waiter[] = [];
  let inFlight = 0;

  const release = () => {
    const next = queue.shift();
    if (next) next.admit();
    else inFlight--;
  };

  return async (c, next) => {
    if (inFlight < maxInFlight) {
      inFlight++;
    } else {
      const shed = (reason: 'queue_full' | 'queue_timeout', message: string) => {
        httpRequestsShed.inc({ reason });
        c.header('Retry-After', retryAfter);
        return c.json(errorBody('overloaded', message), 503);
      };
      if (queue.length >= maxQueued) return shed('queue_full', `The server is at capacity (${maxInFlight} running, ${maxQueued} waiting); retry later`);
      const signal = c.req.raw.signal;
      if (signal.aborted) return c.body(null, 499 as never);
      const outcome = await new Promise<'admitted' | 'timeout' | 'gone'>((resolve) => {
        const leave = (why: 'timeout' | 'gone') => {
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
          resolve(why);
        };
        const timer = setTimeout(() => leave('timeout'), queueTimeoutMs);
        const onAbort = () => leave('gone');
        // The slot passes from the request that leaves to this one: inFlight stays as it is.
        const waiter: Waiter = {
          admit: () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            resolve('admitted');
          },
        };
        queue.push(waiter);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      if (outcome === 'timeout') return shed('queue_timeout', `The server is at capacity: the request waited ${queueTimeoutMs} ms without a turn; retry later`);
      // Nobody is listening for the answer, and nothing was run.
      if (outcome === 'gone') return c.body(null, 499 as never);
    }
    try {
      await next();
    } finally {
      release();
    }
  };
}
