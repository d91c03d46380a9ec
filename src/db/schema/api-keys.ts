import { sql } from 'drizzle-orm';
import { index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * API keys: each belongs to a tenant. Only the sha256 of the key is stored (see
 * src/auth/api-key-secret.ts for why not a slow password hash); `prefix`, the key's first
 * characters, names it in listings and revocations without being enough to use it.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id').notNull(),
    name: text('name').notNull().default(''),
    keyHash: text('key_hash').notNull(),
    prefix: text('prefix').notNull(),
    /**
     * What the key may do: `read`, `write`, `admin` (src/auth/api-key-scopes.ts). The default is
     * all three, so keys stored before scopes existed keep doing what they did.
     */
    scopes: text('scopes').array().notNull().default(sql`'{read,write,admin}'::text[]`),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Set once: a revoked key is refused, and kept so that listings show what it was. */
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [uniqueIndex('api_keys_key_hash_idx').on(t.keyHash), index('api_keys_prefix_idx').on(t.prefix)],
);
