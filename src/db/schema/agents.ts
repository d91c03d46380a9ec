import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * Agents: the settings a chat runs with for an `agentId` (the namespace of its memories and
 * conversations). `settings` is the current version's; every change writes a new version below.
 */
export const agents = pgTable(
  'agents',
  {
    tenantId: tenantIdColumn(),
    id: text('id').notNull(),
    version: integer('version').notNull(),
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] }), index('agents_tenant_created_idx').on(t.tenantId, t.createdAt, t.id)],
);

/** Every version of every agent, kept so that a stored turn's `agentVersion` can be read back. */
export const agentVersions = pgTable(
  'agent_versions',
  {
    tenantId: tenantIdColumn(),
    agentId: text('agent_id').notNull(),
    version: integer('version').notNull(),
    settings: jsonb('settings').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.agentId, t.version] })],
);
