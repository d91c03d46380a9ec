/**
 * What the app's handlers and middleware find on their context, typed for every route: `tenantId`
 * is set by `apiKeyAuth` on every `/v1` and `/mcp` request (the key's tenant, or `default` when no keys
 * exist). Read it with `tenantOf`, which fails where it was never set.
 */
export type ApiEnv = {
  Variables: {
    tenantId: string;
  };
};
