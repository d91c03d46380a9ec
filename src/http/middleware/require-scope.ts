import type { Context, MiddlewareHandler } from 'hono';
import type { ApiKeyScope } from '../../auth/api-key-scopes.js';
import type { ApiEnv } from '../api-env.js';
import { errorBody } from '../../api/errors.js';
import { scopeOfRequest } from '../route-scopes.js';

/**
 * Refuses a request whose key lacks the scope its route needs (`route-scopes.ts`), with 403
 * `forbidden` naming the scope. Runs after `apiKeyAuth`: without keys in use there is no key to
 * hold scopes, and everything is allowed, as on a server that never had keys.
 */
export function requireRouteScope(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const scope = scopeOfRequest(c.req.method, c.req.path);
    if (scope === 'public') return next();
    const refused = refuseWithoutScope(c, scope, `${c.req.method} ${c.req.path}`);
    return refused ?? next();
  };
}

/** The 403 reply when the request's key lacks `scope`, or undefined when it may go on. */
export function refuseWithoutScope(c: Context<ApiEnv>, scope: ApiKeyScope, what: string): Response | undefined {
  const key = c.get('apiKey');
  if (key === undefined || key.scopes.includes(scope)) return undefined;
  return c.json(errorBody('forbidden', forbiddenMessage(scope, what, key.scopes)), 403);
}

export function forbiddenMessage(scope: ApiKeyScope, what: string, held: readonly ApiKeyScope[]): string {
  return `This API key lacks the "${scope}" scope, which ${what} needs (the key has: ${held.join(', ') || 'none'}).`;
}
