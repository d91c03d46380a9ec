import { z } from 'zod';
import { API_KEY_SCOPES, DEFAULT_NEW_KEY_SCOPES, apiKeyScopesSchema } from '../../auth/api-key-scopes.js';
import { tenantIdSchema } from '../../tenancy/tenant-id.js';

/** The key routes' inputs and replies. A key's secret appears in one reply only: its creation's. */

export const KEY_NAME_MAX_CHARS = 200;

export const keyNameSchema = z
  .string()
  .trim()
  .max(KEY_NAME_MAX_CHARS)
  .regex(/^[^\u0000-\u001F\u007F]*$/, 'may not contain control characters');

export const createKeyBody = z.strictObject({
  name: keyNameSchema.optional().meta({ description: 'Names the key in listings and in the audit log.' }),
  scopes: apiKeyScopesSchema.optional().meta({ description: `What the key may do; default ${DEFAULT_NEW_KEY_SCOPES.map((s) => `\`${s}\``).join(' and ')}.` }),
  tenantId: tenantIdSchema.optional().meta({
    description:
      "The key's tenant; default the request's. Another tenant only on a server running without keys (listening on loopback): " +
      'that is how the first key of each tenant is made while the server runs.',
  }),
});

export const keyIdParams = z.strictObject({ id: z.uuid().meta({ description: "The key's id (`GET /v1/keys`)." }) });

export const apiKeySchema = z
  .object({
    id: z.uuid(),
    tenantId: z.string(),
    name: z.string(),
    prefix: z.string().meta({ description: "The key's first characters: enough to tell keys apart, far too few to use one." }),
    scopes: z.array(z.enum(API_KEY_SCOPES)),
    createdAt: z.iso.datetime(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKey', description: 'A stored key: never its secret, nor its hash.' });

export const createdKeySchema = z
  .object({
    key: z.string().meta({ description: 'The secret, shown this once: only its hash is stored.' }),
    apiKey: apiKeySchema,
  })
  .meta({ id: 'CreatedApiKey' });

export const keyListSchema = z.object({ items: z.array(apiKeySchema) }).meta({ id: 'ApiKeyList' });
