import type { MiddlewareHandler } from 'hono';
import { raceDeadline } from '../../api/deadline.js';
import { HttpError } from '../../api/errors.js';

/**
 * A 504 `request_timeout` JSON error once a request has run for `ms`. hono/timeout only races
 * the handler; this also aborts the request's signal at the deadline, and the routes hand that
 * signal to searches, ingestion and the embedder, so the work stops rather than finishing (and
 * committing) behind a reply that said it failed.
 *
 * The request keeps its object: its `signal` alone is replaced, by one that also aborts at the
 * deadline. A new `Request` around it would pipe its body through one more web stream, which cost
 * about 2% of the server's main thread under `bench:load`'s memory searches.
 *
 * Not for /v1/chat (app.ts skips it): a turn is bounded by LLM_TIMEOUT_MS per model call, tool
 * timeouts and its iteration cap, and a streamed reply may rightly take minutes.
 */
export function requestTimeout(ms: number): MiddlewareHandler {
  return async (c, next) => {
    const timedOut = () => new HttpError(504, 'request_timeout', `The request did not complete within ${ms} ms`);
    await raceDeadline(ms, timedOut, (deadline) => {
      const signal = AbortSignal.any([c.req.raw.signal, deadline]);
      Object.defineProperty(c.req.raw, 'signal', { value: signal, configurable: true, enumerable: true });
      return next();
    });
  };
}
