import type { Context } from 'hono';

declare module 'hono' {
  interface ContextVariableMap {
    /** Set by `apiKeyAuth` on every `/v1` request: the key's tenant, or `default` when no keys exist. */
    tenantId: string;
  }
}

/**
 * The tenant of the request. Only `/v1` routes have one: reaching this elsewhere is a wiring
 * mistake, and failing is safer than falling back to any tenant.
 */
export function tenantOf(c: Context): string {
  const tenantId = c.get('tenantId');
  if (typeof tenantId !== 'string' || tenantId === '') throw new Error(`no tenant for ${c.req.method} ${c.req.path}: apiKeyAuth did not run`);
  return tenantId;
}
