import { Hono } from 'hono';
import type { AppContext } from '../../app-context.js';
import { searchBody } from '../schemas/document-schemas.js';
import { tenantOf } from '../tenant-context.js';
import { parseBody } from '../validate.js';

/** `POST /v1/search`: hybrid, vector or BM25 retrieval over the tenant's document chunks, with citation fields. */
export function createSearchRoutes(ctx: AppContext): Hono {
  const body = searchBody(ctx.config.MAX_TOP_K, ctx.search.rerankers);
  const routes = new Hono();
  routes.post('/', async (c) => {
    const { query, ...options } = await parseBody(c, body);
    const hits = await ctx.search.forTenant(tenantOf(c)).search(query, { ...options, signal: c.req.raw.signal });
    return c.json({ hits });
  });
  return routes;
}
