import type { Context, MiddlewareHandler, Next } from 'hono';
import { requestId } from 'hono/request-id';
import { routePath } from 'hono/route';
import type { Logger } from '../../observability/logger.js';
import { requestContext } from '../../observability/request-context.js';
import { activeTraceId } from '../../observability/tracing.js';

/**
 * Gives each request an id (the caller's `X-Request-Id` when it looks like one: letters,
 * digits, `-`, `_`, `=`, at most 128; a new UUID otherwise), echoes it in the response, runs
 * the request inside a request context so that every log line written meanwhile carries it,
 * and writes one access-log line when the response is ready. While tracing is on the id is the
 * trace id of the request's span (see tracing.ts), whatever the caller sent: a log line leads to
 * its trace and back; a caller correlates through `traceparent` instead.
 */
export function requestLogging(logger: Logger): MiddlewareHandler {
  const assignId = requestId({ limitLength: 128 });
  return (c, next) => {
    const traceId = activeTraceId();
    if (traceId === undefined) return assignId(c, () => served(c, next));
    c.set('requestId', traceId);
    c.header('X-Request-Id', traceId);
    return served(c, next);
  };

  function served(c: Context, next: Next): Promise<void> {
    return requestContext.run({ requestId: c.get('requestId') }, async () => {
      const started = performance.now();
      try {
        await next();
      } finally {
        const status = c.res.status;
        const line = {
          method: c.req.method,
          route: routeOf(c),
          path: c.req.path,
          status,
          // Until the response headers: a streamed body (chat SSE) goes on after this line.
          durationMs: Math.round((performance.now() - started) * 10) / 10,
        };
        if (status >= 500) logger.error(line, 'request');
        else logger.info(line, 'request');
      }
    });
  }
}

/**
 * The pattern of the route that answered (`/v1/memories/:key`), never the raw path, so that
 * metrics keep a bounded set of series. A request no route matched gets the pattern of the last
 * middleware it went through (`*`, `/v1/*`).
 */
export function routeOf(c: Context): string {
  return routePath(c) || '*';
}
