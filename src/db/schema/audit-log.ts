import { bigint, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * What was done that must stay answerable for (a user's erasure): who did it, to which user, and
 * counts. Never the content: an entry must not bring back what it records the removal of.
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: tenantIdColumn(),
    /** e.g. `user.erased`. */
    action: text('action').notNull(),
    /** The user the action was about; '' for none. */
    userId: text('user_id').notNull().default(''),
    /** Who did it: the API key (its id and name), or the operator's command. */
    actor: jsonb('actor').$type<Record<string, unknown>>().notNull(),
    /** Counts and other figures of the action; never content. */
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('audit_log_tenant_idx').on(t.tenantId, t.id), index('audit_log_tenant_user_idx').on(t.tenantId, t.userId, t.id)],
);
