import { type SQL, and, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { textArray } from '../db/sql-arrays.js';
import type { CorpusFilter, TagFilter } from './filter.js';

/** The columns a corpus's filters apply to. */
export interface FilterColumns {
  tenantId: PgColumn;
  tags: PgColumn;
  /** Each name a `CorpusFilter.equals` may hold, and its column. */
  equals?: Readonly<Record<string, PgColumn>>;
}

/**
 * Conditions on a `text[]` tags column. `&&` and `@>` are answered by a GIN index on it, and the
 * conditions go inside the query, before ORDER BY/LIMIT, so filtering never shrinks a page.
 */
export function tagConditions(column: PgColumn | SQL, filter: TagFilter): SQL[] {
  const parts: SQL[] = [];
  if (filter.tagsAny.length) parts.push(sql`${column} && ${textArray(filter.tagsAny)}`);
  if (filter.tagsAll.length) parts.push(sql`${column} @> ${textArray(filter.tagsAll)}`);
  if (filter.tagsNone.length) parts.push(sql`NOT (${column} && ${textArray(filter.tagsNone)})`);
  return parts;
}

/** The WHERE clause of a filter on a corpus's columns: tenant, equalities, then the tag conditions. */
export function filterToSql(filter: CorpusFilter, columns: FilterColumns): SQL {
  const equalities = Object.entries(filter.equals).map(([name, value]) => {
    const column = columns.equals?.[name];
    // A wiring mistake, not a client's: a filter the corpus cannot apply must never be dropped silently.
    if (!column) throw new Error(`this corpus has no column for the filter "${name}"`);
    return sql`${column} = ${value}`;
  });
  return and(sql`${columns.tenantId} = ${filter.tenantId}`, ...equalities, ...tagConditions(columns.tags, filter.tags))!;
}
