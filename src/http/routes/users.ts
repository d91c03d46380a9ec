import { createRoute } from '@hono/zod-openapi';
import type { AppContext } from '../../app-context.js';
import type { AuditActor } from '../../audit/audit-types.js';
import { validationError } from '../../api/errors.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { jsonReply } from '../openapi/route-responses.js';
import { userErasureReplySchema, userIdParams } from '../../api/schemas/user-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseWith } from '../validate.js';

/** `/v1/users`: a user's data across the tenant's agents. */
export function createUserRoutes(ctx: AppContext): ApiRoutes {
  const routes = createApiRoutes();

  // No route matches an empty user id: say which field is missing rather than that nothing matched.
  routes.use('/*', async (c, next) => {
    if (c.req.method === 'DELETE' && /\/users\/?$/.test(c.req.path)) throw validationError([{ path: 'userId', message: 'is required' }], 'path');
    return next();
  });

  const eraseUserRoute = createRoute({
    method: 'delete',
    path: '/{userId}',
    operationId: 'eraseUser',
    tags: [TAGS.users],
    summary: 'Erase everything of a user in the tenant, across agents',
    description:
      "Deletes the user's memories with their history, conversations with their messages, turns, checkpoints and summaries, runs and " +
      "jobs, keeping the search statistics exact; memories of other scopes drawn from the user's conversations keep their content, " +
      'but those origins are marked `deleted` and lose their quotes. Recorded in the audit log (`GET /v1/audit`): who, which user, ' +
      'the counts. A user with no data answers zero counts. The work is done in batches, each its own transaction: cut short (a ' +
      'timeout, a crash), what was done stays done and is on record; calling again finishes it and answers what that call erased.',
    request: { params: userIdParams },
    responses: { 200: jsonReply('What this call erased.', userErasureReplySchema) },
  });
  defineRoute(routes, eraseUserRoute, async (c) => {
    const { userId } = parseWith(userIdParams, c.req.param(), 'path');
    const key = c.get('apiKey');
    const actor: AuditActor = key ? { type: 'api_key', keyId: key.keyId, name: key.name || null } : { type: 'open' };
    // The request's signal: past the request timeout the erasure stops between batches, on record as not completed.
    const { erased } = await ctx.userErasure.forTenant(tenantOf(c)).erase(userId, { actor, signal: c.req.raw.signal });
    return c.json({ erased });
  });

  return routes;
}
