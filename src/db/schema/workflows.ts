import { index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * Workflows: graphs of agent steps (nodes, edges with conditions) run as one run. `definition` is
 * the current version's; every change writes a new version below, as agents do.
 */
export const workflows = pgTable(
  'workflows',
  {
    tenantId: tenantIdColumn(),
    id: text('id').notNull(),
    version: integer('version').notNull(),
    definition: jsonb('definition').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] }), index('workflows_tenant_created_idx').on(t.tenantId, t.createdAt, t.id)],
);

/** Every version of every workflow, so that a run's definition can be read back. */
export const workflowVersions = pgTable(
  'workflow_versions',
  {
    tenantId: tenantIdColumn(),
    workflowId: text('workflow_id').notNull(),
    version: integer('version').notNull(),
    definition: jsonb('definition').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.workflowId, t.version] })],
);
