import { Hono } from 'hono';
import type { AppContext } from '../../app-context.js';
import { TAG_LIST_PARAMS, tagCountsQuery } from '../schemas/memory-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseQuery } from '../validate.js';

/** `/v1/tags`: how many of the tenant's memories carry each tag, under the same filters as a listing. */
export function createTagRoutes(ctx: AppContext): Hono {
  const routes = new Hono();
  routes.get('/', async (c) => {
    const filter = parseQuery(c, tagCountsQuery, { lists: TAG_LIST_PARAMS });
    return c.json({ tags: await ctx.memories.forTenant(tenantOf(c)).tagCounts(filter) });
  });
  return routes;
}
