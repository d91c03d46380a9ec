import type { Context, MiddlewareHandler } from 'hono';
import { requestId } from 'hono/request-id';
import { routePath } from 'hono/route';
import type { Logger } from '../../observability/logger.js';
import { requestContext } from '../../observability/request-context.js';

/**
 * Gives each request an id (the caller's `X-Request-Id` when it looks like one: letters,
 * digits, `-`, `_`, `=`, at most 128; a new UUID otherwise), echoes it in the response, runs
 * the request inside a request context so that every log line written meanwhile carries it,
 * and writes one access-log line when the response is ready.
 */
export function requestLogging(logger: Logger): MiddlewareHandler {
  const assignId = requestId({ limitLength: 128 });
  return (c, next) =>
    assignId(c, () =>
      requestContext.run({ requestId: c.get('requestId') }, async () => {
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
      }),
    );
}

/**
 * The pattern of the route that answered (`/v1/memories/:key`), never the raw path, so that
 * metrics keep a bounded set of series. A request no route matched gets the pattern of the last
 * middleware it went through (`*`, `/v1/*`).
 */
export function routeOf(c: Context): string {
  return routePath(c) || '*';
}
