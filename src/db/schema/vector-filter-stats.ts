import { bigint, pgTable, primaryKey, smallint, text } from 'drizzle-orm/pg-core';

/**
 * How many rows of a vector table each filter scope and tag holds, kept by triggers in the
 * writing transaction (migration 0009): a filtered vector search reads its selectivity here, in
 * the statement that sets up the search, instead of counting the matching rows first. `scope` is
 * the table's own (memories: the agent, and the agent with a user after U+001F; chunks: '');
 * `tag` '' counts every row of the scope. The counts are upper bounds for a search: they include
 * invalidated and expired rows, and rows without a vector.
 *
 * A count is the sum of its `shard` rows (migration 0025): each writing transaction adds to the
 * shard its id picks, so that the tenant's concurrent writers of one agent or tag do not queue on
 * one row until each commits; readers sum the shards.
 */
export const vectorFilterStats = pgTable(
  'vector_filter_stats',
  {
    tableName: text('table_name').notNull(),
    tenantId: text('tenant_id').notNull(),
    scope: text('scope').notNull(),
    tag: text('tag').notNull(),
    shard: smallint('shard').notNull().default(0),
    rows: bigint('rows', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.tableName, t.tenantId, t.scope, t.tag, t.shard] })],
);
