import { z } from 'zod';

/** The tenant of requests without API keys, of `API_KEYS` entries without one, and of rows stored before tenants existed. */
export const DEFAULT_TENANT_ID = 'default';

export const TENANT_ID_MAX_CHARS = 128;

/**
 * Tenant ids are names an operator types (`npm run keys -- create --tenant acme`). No ":", so an
 * `API_KEYS` entry `tenant:key` splits at its first colon unambiguously.
 */
export const tenantIdSchema = z
  .string()
  .min(1)
  .max(TENANT_ID_MAX_CHARS)
  .regex(/^[\w.@-]+$/, 'may contain only letters, digits, "_", ".", "@" and "-"');
