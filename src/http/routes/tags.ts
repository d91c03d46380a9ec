import { createRoute } from '@hono/zod-openapi';
import type { AppContext } from '../../app-context.js';
import { TAGS } from '../openapi/api-tags.js';
import { type ApiRoutes, createApiRoutes, defineRoute } from '../openapi/define-route.js';
import { jsonReply } from '../openapi/route-responses.js';
import { tagCountsReplySchema } from '../../api/schemas/memory-reply-schemas.js';
import { TAG_LIST_PARAMS, tagCountsQuery } from '../../api/schemas/memory-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseQuery } from '../validate.js';

/** `/v1/tags`: how many of the tenant's memories carry each tag, under the same filters as a listing. */
export function createTagRoutes(ctx: AppContext): ApiRoutes {
  const routes = createApiRoutes();
  const countTagsRoute = createRoute({
    method: 'get',
    path: '/',
    operationId: 'countTags',
    tags: [TAGS.memories],
    summary: 'How many memories carry each tag',
    request: { query: tagCountsQuery },
    responses: { 200: jsonReply('Tags and their counts.', tagCountsReplySchema) },
  });
  defineRoute(routes, countTagsRoute, async (c) => {
    const filter = parseQuery(c, tagCountsQuery, { lists: TAG_LIST_PARAMS });
    return c.json({ tags: await ctx.memories.forTenant(tenantOf(c)).tagCounts(filter) });
  });
  return routes;
}
