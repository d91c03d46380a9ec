import { sql } from 'drizzle-orm';
import { bigint, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * Every change of a memory, oldest first by `id`: kept after the memory is deleted, so its
 * lineage can still be read (by scope and key) and followed.
 */
export const memoryHistory = pgTable(
  'memory_history',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: tenantIdColumn(),
    memoryId: uuid('memory_id').notNull(),
    agentId: text('agent_id').notNull(),
    userId: text('user_id').notNull().default(''),
    key: text('key').notNull(),
    /** created | updated | invalidated | deleted | expired */
    event: text('event').notNull(),
    content: text('content'),
    previousContent: text('previous_content'),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    previousTags: text('previous_tags').array(),
    /**
     * The memory as the event left it, beside its content and tags, so that it can be read as it was
     * at any moment (`asOf`). NULL on events recorded before these columns existed.
     */
    metadata: jsonb('metadata').$type<Record<string, unknown>>(),
    sources: jsonb('sources').$type<Record<string, unknown>[]>(),
    validFrom: timestamp('valid_from', { withTimezone: true }),
    validUntil: timestamp('valid_until', { withTimezone: true }),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    /** The firewall's verdict as the event left it (`active`, `quarantined`) and its reasons. */
    status: text('status'),
    quarantineReasons: text('quarantine_reasons').array(),
    /** `{type: 'api'}`, `{type: 'tool', conversationId, turn}` or `{type: 'extraction', conversationId, turn}`. */
    actor: jsonb('actor').$type<Record<string, unknown>>().notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('memory_history_scope_key_idx').on(t.tenantId, t.agentId, t.userId, t.key, t.id),
    index('memory_history_memory_idx').on(t.memoryId, t.id),
    // A scope as it was at a moment (`asOf` list and search): its events up to then, by memory.
    index('memory_history_scope_at_idx').on(t.tenantId, t.agentId, t.userId, t.at),
  ],
);
