import type { SQL } from 'drizzle-orm';
import { sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { textArray } from './sql-arrays.js';

/** Tag filters after normalisation (see `normalizeTags`). */
export interface TagFilter {
  tagsAny: readonly string[];
  tagsAll: readonly string[];
  tagsNone: readonly string[];
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
