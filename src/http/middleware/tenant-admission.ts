import type { Context, MiddlewareHandler } from 'hono';
import { admissionWait } from '../../observability/metrics.js';
import type { ApiEnv } from '../api-env.js';
import { errorBody } from '../../api/errors.js';
import { AdmissionSlots, type SlotOutcome } from './admission-slots.js';
import { type AdmissionTicket, retryAfterSeconds } from './concurrency-limit.js';

export interface TenantAdmissionOptions {
  /** Requests one tenant may run at once. */
  maxPerTenant: number;
  /** Requests of one tenant that may wait for its turn; one more is answered 429 at once. */
  maxQueued: number;
  /** How long a request may wait for admission, counted from its arrival. */
  queueTimeoutMs: number;
}

/**
 * One tenant's share of the admission slots, checked behind the key check (the tenant is the
 * key's): at most `maxPerTenant` of its requests run, long chats included, so that one tenant
 * cannot take every slot and leave the others 503s; a streamed reply holds its slot until it ends. A request past its tenant's share waits,
 * without holding a server slot, until one of its tenant's requests ends; past `maxQueued` or its
 * deadline it is answered 429 `rate_limited` with `Retry-After`, without having run.
 * Records every admitted request's wait in `memrag_admission_wait_seconds`, by tenant.
 */
export function tenantAdmission(options: TenantAdmissionOptions): MiddlewareHandler<ApiEnv> {
  const { maxPerTenant, maxQueued, queueTimeoutMs } = options;
  const retryAfter = String(retryAfterSeconds(queueTimeoutMs));
  const tenants = new Map<string, AdmissionSlots>();
  // A tenant's slots are dropped once idle: the map holds only tenants active at the moment.
  const forgetIfIdle = (tenantId: string, slots: AdmissionSlots) => {
    if (slots.inUse === 0 && slots.waiting === 0) tenants.delete(tenantId);
  };

  return async (c, next) => {
    const tenantId = c.get('tenantId');
    const ticket = c.get('admission') as AdmissionTicket | undefined;
    const arrivedAt = ticket?.arrivedAt ?? performance.now();
    const deadline = ticket?.deadline ?? arrivedAt + queueTimeoutMs;
    const signal = c.req.raw.signal;
    let slots = tenants.get(tenantId);
    if (!slots) {
      slots = new AdmissionSlots(maxPerTenant, maxQueued);
      tenants.set(tenantId, slots);
    }

    let outcome: SlotOutcome;
    if (slots.inUse < slots.limit) {
      outcome = await slots.take(signal, deadline);
    } else {
      // Waiting on its own tenant, the request gives its server slot to whoever waits for one.
      if (ticket?.holding) {
        ticket.holding = false;
        ticket.slots.release();
      }
      outcome = await slots.take(signal, deadline);
      if (outcome === 'admitted' && ticket) {
        const server = await ticket.slots.take(signal, deadline, true);
        if (server !== 'admitted') {
          slots.release();
          forgetIfIdle(tenantId, slots);
          if (server === 'gone') return c.body(null, 499 as never);
          c.header('Retry-After', retryAfter);
          return c.json(errorBody('overloaded', `The server is at capacity: the request waited ${queueTimeoutMs} ms without a turn; retry later`), 503);
        }
        ticket.holding = true;
      }
    }
    if (outcome !== 'admitted') {
      forgetIfIdle(tenantId, slots);
      if (outcome === 'gone') return c.body(null, 499 as never);
      c.header('Retry-After', retryAfter);
      const message =
        outcome === 'queue_full'
          ? `Too many requests at once: this tenant has ${maxPerTenant} running and ${maxQueued} waiting; retry later`
          : `Too many requests at once: this tenant has ${maxPerTenant} running, and the request waited ${queueTimeoutMs} ms without a turn; retry later`;
      return c.json(errorBody('rate_limited', message), 429);
    }

    admissionWait.observe({ tenant: tenantId }, (performance.now() - arrivedAt) / 1000);
    const release = () => {
      slots.release();
      forgetIfIdle(tenantId, slots);
    };
    try {
      await next();
    } catch (error) {
      release();
      throw error;
    }
    // A streamed chat runs its turn after its headers, and goes on after its client leaves (to be
    // reconnected to): its slot is held until the turn ends, or a tenant could run any number of
    // turns at once by asking for streams and hanging up.
    const heldUntil = c.get('admissionHeldUntil');
    if (heldUntil) {
      heldUntil.then(release, release);
      return;
    }
    // The type first: reading `body` turns @hono/node-server's lightweight response into a full
    // one, written out through web streams rather than as the string it holds.
    const body = (c.res.headers.get('content-type') ?? '').startsWith('text/event-stream') ? c.res.body : null;
    if (body) {
      c.res = new Response(releasingOnEnd(body, release), c.res);
    } else {
      release();
    }
  };
}

declare module 'hono' {
  interface ContextVariableMap {
    admissionHeldUntil: Promise<unknown>;
  }
}

/**
 * Wraps a streamed reply's work so that its tenant's admission slot is held until the work ends,
 * not until the response does: a turn streamed to a client who left still runs.
 */
export function heldUntilDone<T extends unknown[]>(c: Context, work: (...args: T) => Promise<void>): (...args: T) => Promise<void> {
  let done!: () => void;
  c.set('admissionHeldUntil', new Promise<void>((resolve) => (done = resolve)));
  return async (...args) => {
    try {
      await work(...args);
    } finally {
      done();
    }
  };
}

/** The same bytes, with `onEnd` called once when the stream closes, fails or its reader cancels it. */
function releasingOnEnd(body: ReadableStream<Uint8Array>, onEnd: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    onEnd();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          end();
          controller.close();
        } else {
          controller.enqueue(chunk.value);
        }
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}
