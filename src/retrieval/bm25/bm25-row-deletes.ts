import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Tx } from '../../db/database.js';
import { queryRows } from '../../db/query-rows.js';
import { type Bm25Changes, applyBm25Changes, noBm25Changes } from './bm25-changes.js';
import type { Bm25IndexTables } from './bm25-index-tables.js';
import { removeBm25Postings } from './bm25-postings-write.js';

export interface IndexedRows {
  table: PgTable;
  idColumn: PgColumn;
  /** NULL on rows that were never indexed: they leave the totals as they are. */
  lengthColumn: PgColumn;
  /** Which rows to delete (their tenant included). */
  where: SQL;
}

/**
 * Deletes the tenant's rows `rows.where` selects, with their postings, and takes them out of the
 * document frequencies and totals, or, with `changes`, out of those; returns how many rows went.
 */
export async function deleteBm25Rows(tx: Tx, t: Bm25IndexTables, tenantId: string, rows: IndexedRows, changes?: Bm25Changes): Promise<number> {
  const own = changes ?? noBm25Changes();
  await removeBm25Postings(tx, t, tenantId, sql`SELECT ${rows.idColumn} FROM ${rows.table} WHERE ${rows.where}`, own);
  const [row] = await queryRows<{ n: number; indexed: number; length: string | number }>(
    tx,
    sql`WITH gone AS (DELETE FROM ${rows.table} WHERE ${rows.where} RETURNING ${rows.lengthColumn} AS len)
      SELECT count(*)::int AS n, count(len)::int AS indexed, coalesce(sum(len), 0) AS length FROM gone`,
  );
  own.documents -= Number(row?.indexed ?? 0);
  own.length -= Number(row?.length ?? 0);
  if (!changes) await applyBm25Changes(tx, t, tenantId, own);
  return Number(row?.n ?? 0);
}
