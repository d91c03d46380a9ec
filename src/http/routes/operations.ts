import { createRoute } from '@hono/zod-openapi';
import { z } from 'zod';
import type { AppContext } from '../../app-context.js';
import { metricsRegistry } from '../../observability/metrics.js';
import { checkReadiness } from '../../observability/readiness.js';
import { errorBody } from '../../api/errors.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { jsonReply } from '../openapi/route-responses.js';
import { healthReplySchema, notReadyReplySchema, readyReplySchema } from '../../api/schemas/operations-reply-schemas.js';

/**
 * `/healthz` and `/readyz` for load balancers and orchestrators (alive; take traffic or not),
 * `/metrics` for Prometheus. Outside `/v1`, so neither API keys nor the rate limit apply: probes
 * and scrapers carry no key, and must not be throttled into reporting an outage.
 */
export function createOperationsRoutes(ctx: AppContext): ApiRoutes {
  const routes = createApiRoutes();

  const healthRoute = createRoute({
    method: 'get',
    path: '/healthz',
    operationId: 'health',
    tags: [TAGS.operations],
    summary: 'Liveness: the process is up',
    responses: { 200: jsonReply('Alive.', healthReplySchema) },
  });
  defineRoute(routes, healthRoute, (c) => c.json({ status: 'ok' }));

  const readinessRoute = createRoute({
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    tags: [TAGS.operations],
    summary: 'Readiness: the database answers and the embedder is open',
    description: 'The database must answer `SELECT 1` within 2 s, and the embedder be open with its workers alive.',
    responses: {
      200: jsonReply('Ready to serve.', readyReplySchema),
      503: jsonReply('Not ready: `not_ready`, with each failing check in `details` and `checks`.', notReadyReplySchema),
    },
  });
  defineRoute(routes, readinessRoute, async (c) => {
    const { ready, checks } = await checkReadiness(ctx);
    if (ready) return c.json({ status: 'ready', checks });
    const failed = Object.entries(checks).flatMap(([name, check]) => (check.ok ? [] : [{ path: name, message: check.reason ?? 'failed' }]));
    const message = `Not ready: ${failed.map((f) => f.message).join('; ')}`;
    return c.json({ ...errorBody('not_ready', message, failed), checks }, 503);
  });

  const metricsRoute = createRoute({
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    tags: [TAGS.operations],
    summary: 'Prometheus metrics',
    description: 'Prometheus text exposition format. Open like the probes: keep it off the public side of a proxy.',
    responses: { 200: { description: 'The metrics.', content: { 'text/plain': { schema: z.string() } } } },
  });
  defineRoute(routes, metricsRoute, async (c) => {
    c.header('Content-Type', metricsRegistry.contentType);
    // Scrapes must see fresh values; nothing between us and Prometheus should cache them.
    c.header('Cache-Control', 'no-store');
    return c.body(await metricsRegistry.metrics());
  });

  return routes;
}
