import { type SQL, and, eq, lt, or, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { Page } from './page.js';

/**
 * Newest-first keyset pagination on (created_at, id): stable under inserts, and each page one
 * index range. The cursor holds the creation time as Postgres prints it, so no precision is lost
 * to a JS Date.
 */
export interface KeysetColumns {
  createdAt: PgColumn;
  id: PgColumn;
}

/** Ids that are not UUIDs (see `decodeCursor`). */
export interface KeysetOptions {
  isId?: (id: string) => boolean;
}

/** Select it as `createdAtText` beside the page's rows. */
export const createdAtText = (columns: KeysetColumns) => sql<string>`${columns.createdAt}::text`;

/** The rows after the cursor's, in newest-first order; nothing to add without a cursor. */
export function afterCursor(cursor: string | undefined, columns: KeysetColumns, options: KeysetOptions = {}): SQL | undefined {
  if (!cursor) return undefined;
  const { createdAt, id } = decodeCursor(cursor, options.isId);
  const at = sql`${createdAt}::timestamptz`;
  return or(lt(columns.createdAt, at), and(eq(columns.createdAt, at), lt(columns.id, id)));
}

/** A page of `limit` items out of `limit + 1` rows fetched (the extra one says there is more). */
export function keysetPage<R extends { id: string; createdAtText: string }, T>(rows: readonly R[], limit: number, toItem: (row: R) => T): Page<T> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(toItem),
    nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAtText, id: last.id }) : null,
  };
}
