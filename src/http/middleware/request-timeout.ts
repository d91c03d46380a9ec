import type { MiddlewareHandler } from 'hono';
import { HttpError } from '../errors.js';

/**
 * A 504 `request_timeout` JSON error once a request has run for `ms`. hono/timeout only races
 * the handler; this also aborts the request's signal at the deadline, and the routes hand that
 * signal to searches, ingestion and the embedder, so the work stops rather than finishing (and
 * committing) behind a reply that said it failed.
 *
 * Not for /v1/chat (app.ts skips it): a turn is bounded by LLM_TIMEOUT_MS per model call, tool
 * timeouts and its iteration cap, and a streamed reply may rightly take minutes.
 */
export function requestTimeout(ms: number): MiddlewareHandler {
  return async (c, next) => {
    const error = new HttpError(504, 'request_timeout', `The request did not complete within ${ms} ms`);
    const deadline = new AbortController();
    c.req.raw = new Request(c.req.raw, { signal: AbortSignal.any([c.req.raw.signal, deadline.signal]) });
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Work that checks the signal throws this same error, which answers quietly as a 504 too.
        deadline.abort(error);
        reject(error);
      }, ms);
    });
    try {
      await Promise.race([next(), expired]);
    } finally {
      clearTimeout(timer);
    }
  };
}
