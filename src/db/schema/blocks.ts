import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * Working memory: labelled blocks pinned in every turn's prompt. A block is keyed by its scope
 * (`agent_id`, `user_id`; '' for none) and its label; the value is kept by the API, the model's
 * tools and agents' templates, each change an event in `block_history`.
 */
export const blocks = pgTable(
  'blocks',
  {
    tenantId: tenantIdColumn(),
    agentId: text('agent_id').notNull().default(''),
    userId: text('user_id').notNull().default(''),
    label: text('label').notNull(),
    value: text('value').notNull(),
    description: text('description'),
    charLimit: integer('char_limit').notNull(),
    readOnly: boolean('read_only').notNull().default(false),
    schema: jsonb('schema').$type<Record<string, unknown>>(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.agentId, t.userId, t.label] }), index('blocks_tenant_user_idx').on(t.tenantId, t.userId)],
);

/**
 * Every change of a block, oldest first by `id`, with the block as the event left it (or as a
 * screened write would have left it: `status` quarantined, not applied). Kept after the block is
 * deleted, so it can still be read as of a moment.
 */
export const blockHistory = pgTable(
  'block_history',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    tenantId: tenantIdColumn(),
    agentId: text('agent_id').notNull().default(''),
    userId: text('user_id').notNull().default(''),
    label: text('label').notNull(),
    /** written | deleted | quarantined | approved */
    event: text('event').notNull(),
    value: text('value'),
    description: text('description'),
    charLimit: integer('char_limit'),
    readOnly: boolean('read_only'),
    schema: jsonb('schema').$type<Record<string, unknown>>(),
    /** `applied`, or `quarantined` for a write the firewall held (the block was left unchanged). */
    status: text('status').notNull().default('applied'),
    quarantineReasons: text('quarantine_reasons').array(),
    /** `{type: 'api'}`, `{type: 'model', runId, conversationId, tool}`, `{type: 'template', agentVersion}` or `{type: 'import'}`. */
    actor: jsonb('actor').$type<Record<string, unknown>>().notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('block_history_scope_label_idx').on(t.tenantId, t.agentId, t.userId, t.label, t.id),
    index('block_history_tenant_user_idx').on(t.tenantId, t.userId),
  ],
);
