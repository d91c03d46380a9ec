import { integer, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** One row per vector space in use: which embedder wrote the vectors of a table, and their size. */
export const vectorSpaces = pgTable('vector_spaces', {
  tableName: text('table_name').primaryKey(),
  embedderId: text('embedder_id').notNull(),
  dimensions: integer('dimensions').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});
