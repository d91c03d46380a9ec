import type { MiddlewareHandler } from 'hono';
import { httpRequestDuration, httpRequestsInFlight } from '../../observability/metrics.js';
import { routeOf } from './request-logging.js';

/** Observes each request in the latency histogram, by method, route pattern and status, and counts those in flight. */
export const httpMetrics: MiddlewareHandler = async (c, next) => {
  const stop = httpRequestDuration.startTimer();
  httpRequestsInFlight.inc();
  try {
    await next();
  } finally {
    httpRequestsInFlight.dec();
    stop({ method: c.req.method, route: routeOf(c), status: String(c.res.status) });
  }
};
