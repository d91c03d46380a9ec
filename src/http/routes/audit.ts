import { createRoute } from '@hono/zod-openapi';
import type { AppContext } from '../../app-context.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { jsonReply } from '../openapi/route-responses.js';
import { auditPageSchema, listAuditQuery } from '../../api/schemas/audit-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseQuery } from '../validate.js';

/** `/v1/audit`: the tenant's audit log, read only. */
export function createAuditRoutes(ctx: AppContext): ApiRoutes {
  const routes = createApiRoutes();

  const listAuditRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'listAuditEntries',
    tags: [TAGS.audit],
    summary: 'List audit entries, newest first (by user or action, cursor pagination)',
    description: 'Needs the `admin` scope. Reads are not recorded: a log that recorded its own reads would change with every look at it.',
    request: { query: listAuditQuery },
    responses: { 200: jsonReply('One page.', auditPageSchema) },
  });
  defineRoute(routes, listAuditRoute, async (c) => {
    const options = parseQuery(c, listAuditQuery);
    return c.json(await ctx.audit.forTenant(tenantOf(c)).list(options));
  });

  return routes;
}
