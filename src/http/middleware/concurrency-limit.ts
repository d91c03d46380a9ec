import type { MiddlewareHandler } from 'hono';
import { httpRequestsShed } from '../../observability/metrics.js';
import { errorBody } from '../../api/errors.js';
import { AdmissionSlots } from './admission-slots.js';

export interface ConcurrencyLimitOptions {
  /** Requests run at once; the rest wait in arrival order. */
  maxInFlight: number;
  /** Requests that may wait; one more is answered 503 at once. */
  maxQueued: number;
  /** How long a request may wait for its turn before it is answered 503. */
  queueTimeoutMs: number;
}

/**
 * The server-wide slot a request holds, on its context for the tenant's gate behind the key check
 * (tenant-admission.ts): a request past its tenant's share gives this slot back while it waits,
 * so that it does not keep other tenants out, and takes it again before it runs.
 */
export interface AdmissionTicket {
  slots: AdmissionSlots;
  /** When the request arrived and when its wait must end, `performance.now()` times. */
  arrivedAt: number;
  deadline: number;
  holding: boolean;
}

declare module 'hono' {
  interface ContextVariableMap {
    admission: AdmissionTicket;
  }
}

/**
 * Bounded admission: at most `maxInFlight` requests run, at most `maxQueued` wait, and none waits
 * longer than `queueTimeoutMs`. Past either bound the answer is 503 `overloaded` with
 * `Retry-After`, at once, rather than a request queued until it would time out anyway, holding
 * its client and adding to every later request's wait. A waiting request whose client hangs up
 * leaves the queue without running. A request counts until its handler has answered (for a
 * stream, until its headers).
 *
 * It runs before the key check, so requests with no key or a wrong one are bounded too; the
 * tenant's share is checked behind the key check, against the same slots.
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions): MiddlewareHandler {
  const { maxInFlight, maxQueued, queueTimeoutMs } = options;
  const retryAfter = String(retryAfterSeconds(queueTimeoutMs));
  const slots = new AdmissionSlots(maxInFlight, maxQueued);

  return async (c, next) => {
    const arrivedAt = performance.now();
    const outcome = await slots.take(c.req.raw.signal, arrivedAt + queueTimeoutMs);
    if (outcome === 'gone') return c.body(null, 499 as never);
    if (outcome !== 'admitted') {
      httpRequestsShed.inc({ reason: outcome });
      c.header('Retry-After', retryAfter);
      const message =
        outcome === 'queue_full'
          ? `The server is at capacity (${maxInFlight} running, ${maxQueued} waiting); retry later`
          : `The server is at capacity: the request waited ${queueTimeoutMs} ms without a turn; retry later`;
      return c.json(errorBody('overloaded', message), 503);
    }
    const ticket: AdmissionTicket = { slots, arrivedAt, deadline: arrivedAt + queueTimeoutMs, holding: true };
    c.set('admission', ticket);
    try {
      await next();
    } finally {
      if (ticket.holding) slots.release();
    }
  };
}

/** Whole seconds, at least one: a client told to retry in 0 s would retry at once. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
