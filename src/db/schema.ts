import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { vectorColumn } from './vector-column.js';

/** One row per vector space in use: which embedder wrote the vectors of a table, and their size. */
export const vectorSpaces = pgTable('vector_spaces', {
  tableName: text('table_name').primaryKey(),
  embedderId: text('embedder_id').notNull(),
  dimensions: integer('dimensions').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

export const memories = pgTable(
  'memories',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    agentId: text('agent_id').notNull(),
    key: text('key').notNull(),
    content: text('content').notNull(),
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    embedding: vectorColumn('embedding'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('memories_agent_key_idx').on(t.agentId, t.key),
    // fastupdate off: a pending list makes every filtered search scan it (7 ms at 100k rows).
    index('memories_tags_gin_idx').using('gin', t.tags).with({ fastupdate: false }),
    index('memories_agent_created_idx').on(t.agentId, t.createdAt, t.id),
  ],
);
