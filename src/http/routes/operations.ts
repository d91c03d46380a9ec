import { Hono } from 'hono';
import type { AppContext } from '../../app-context.js';
import { metricsRegistry } from '../../observability/metrics.js';
import { checkReadiness } from '../../observability/readiness.js';
import { errorBody } from '../errors.js';

/**
 * `/readyz` for load balancers and orchestrators (take traffic or not), `/metrics` for
 * Prometheus. Outside `/v1`, so neither API keys nor the rate limit apply: probes and scrapers
 * carry no key, and must not be throttled into reporting an outage.
 */
export function createOperationsRoutes(ctx: AppContext): Hono {
  const routes = new Hono();

  routes.get('/readyz', async (c) => {
    const { ready, checks } = await checkReadiness(ctx);
    if (ready) return c.json({ status: 'ready', checks });
    const failed = Object.entries(checks).flatMap(([name, check]) => (check.ok ? [] : [{ path: name, message: check.reason ?? 'failed' }]));
    const message = `Not ready: ${failed.map((f) => f.message).join('; ')}`;
    return c.json({ ...errorBody('not_ready', message, failed), checks }, 503);
  });

  routes.get('/metrics', async (c) => {
    c.header('Content-Type', metricsRegistry.contentType);
    // Scrapes must see fresh values; nothing between us and Prometheus should cache them.
    c.header('Cache-Control', 'no-store');
    return c.body(await metricsRegistry.metrics());
  });

  return routes;
}
