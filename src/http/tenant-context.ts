import type { Context } from 'hono';
import type { ApiEnv } from './api-env.js';

/**
 * The tenant of the request. Only `/v1` routes and `/mcp` have one: reaching this elsewhere is a
 * wiring mistake, and failing is safer than falling back to any tenant.
 */
export function tenantOf(c: Context<ApiEnv>): string {
  // Typed as always set, but only the middleware of `/v1` and `/mcp` sets it.
  const tenantId = c.get('tenantId') as string | undefined;
  if (typeof tenantId !== 'string' || tenantId === '') throw new Error(`no tenant for ${c.req.method} ${c.req.path}: apiKeyAuth did not run`);
  return tenantId;
}
