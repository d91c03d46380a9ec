import { type Span, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { Context, MiddlewareHandler } from 'hono';
import type { ApiEnv } from '../api-env.js';
import {
  HTTP_REQUEST_METHOD,
  HTTP_RESPONSE_STATUS_CODE,
  HTTP_ROUTE,
  MEMRAG_TENANT_ID,
  URL_PATH,
  URL_SCHEME,
  USER_AGENT_ORIGINAL,
  failSpan,
  recordFailure,
  tracer,
} from '../../observability/tracing.js';
import { routeOf } from './request-logging.js';

/** Reads a request's headers for the propagator (`traceparent`, `tracestate`, `baggage`). */
const headerGetter = {
  keys: (c: Context) => Object.keys(c.req.header()),
  get: (c: Context, key: string) => c.req.header(key),
};

/**
 * A server span per request, with the HTTP semantic conventions (method, route, path, status),
 * active while the request is served so that what it does (retrieval, model and tool calls) nests
 * under it. A W3C `traceparent` sent by the client is continued: the span joins the client's
 * trace. Outermost, before the request logging, which then logs the span's trace id as the
 * request id. With no tracer provider registered (tracing off) the span is the API's no-op one.
 *
 * The span ends when the response is ready: a streamed body (the chat's SSE) goes on after it, and
 * the spans of what it still does end later, under it all the same.
 */
export const tracing: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const parent = propagation.extract(context.active(), c, headerGetter);
  const method = c.req.method;
  const span = tracer().startSpan(
    method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        [HTTP_REQUEST_METHOD]: method,
        [URL_PATH]: c.req.path,
        [URL_SCHEME]: c.req.url.slice(0, c.req.url.indexOf(':')),
        ...userAgent(c),
      },
    },
    parent,
  );
  try {
    await context.with(trace.setSpan(parent, span), next);
  } finally {
    describeResponse(span, c);
    span.end();
  }
};

function userAgent(c: Context): Record<string, string> {
  const agent = c.req.header('user-agent');
  return agent ? { [USER_AGENT_ORIGINAL]: agent } : {};
}

function describeResponse(span: Span, c: Context<ApiEnv>): void {
  if (!span.isRecording()) return;
  const route = routeOf(c);
  const status = c.res.status;
  // The route's pattern names the span (`GET /v1/memories/:key`); a request no route matched keeps the method alone.
  if (route !== '*' && !route.endsWith('/*')) {
    span.updateName(`${c.req.method} ${route}`);
    span.setAttribute(HTTP_ROUTE, route);
  }
  span.setAttribute(HTTP_RESPONSE_STATUS_CODE, status);
  const tenantId: string | undefined = c.get('tenantId');
  if (tenantId !== undefined) span.setAttribute(MEMRAG_TENANT_ID, tenantId);
  // Server spans fail on 5xx only: a 4xx is the client's mistake, answered as it should be.
  if (status >= 500) {
    // A handler's throw is answered by the app's error handler; hono leaves it on the context.
    if (c.error) failSpan(span, c.error);
    else {
      span.setAttribute('error.type', String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
  } else if (c.error) recordFailure(span, c.error);
}
