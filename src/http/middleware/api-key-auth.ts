import type { Context, MiddlewareHandler } from 'hono';
import type { ApiKeyAuthenticator } from '../../auth/api-key-authenticator.js';
import { DEFAULT_TENANT_ID } from '../../tenancy/tenant-id.js';
import type { ApiEnv } from '../api-env.js';
import { errorBody } from '../../api/errors.js';

/**
 * `Authorization: Bearer <key>` → the key's tenant, for `tenantOf(c)`; 401 otherwise. Without
 * any key (none in API_KEYS, none ever stored) every request is tenant `default`: the server
 * then listens on loopback only (see main.ts).
 */
export function apiKeyAuth(auth: ApiKeyAuthenticator): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (!(await auth.isRequired())) {
      c.set('tenantId', DEFAULT_TENANT_ID);
      return next();
    }
    const header = c.req.header('authorization');
    if (header === undefined) return unauthorized(c, 'An API key is required: Authorization: Bearer <key>');
    const key = bearerToken(header);
    if (key === undefined) return unauthorized(c, 'The Authorization header must be: Bearer <key>', 'invalid_request');
    // Revoked and unknown keys get the same answer: which keys once existed is nobody's business.
    const identity = await auth.authenticate(key);
    if (!identity) return unauthorized(c, 'The API key is not valid', 'invalid_token');
    c.set('tenantId', identity.tenantId);
    c.set('apiKey', identity);
    return next();
  };
}

/** The token of a `Bearer` header (RFC 6750: case-insensitive scheme, one token), or undefined. */
export function bearerToken(header: string): string | undefined {
  return /^Bearer +([\x21-\x7E]+) *$/i.exec(header)?.[1];
}

function unauthorized(c: Context, message: string, error?: 'invalid_request' | 'invalid_token') {
  c.header('WWW-Authenticate', `Bearer realm="memrag"${error ? `, error="${error}"` : ''}`);
  return c.json(errorBody('unauthorized', message), 401);
}
