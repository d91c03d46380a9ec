import type { ApiKeyIdentity } from '../auth/api-key-authenticator.js';

/**
 * What the app's handlers and middleware find on their context, typed for every route: `tenantId`
 * is set by `apiKeyAuth` on every `/v1` and `/mcp` request (the key's tenant, or `default` when no keys
 * exist). Read it with `tenantOf`, which fails where it was never set. `apiKey` is the request's
 * key (what the audit log records as who acted); unset when the server runs without keys.
 */
export type ApiEnv = {
  Variables: {
    tenantId: string;
    apiKey?: ApiKeyIdentity;
  };
};
