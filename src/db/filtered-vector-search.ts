import { type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Db } from './database.js';
import { queryRows } from './query-rows.js';

/** How a filtered nearest-neighbour search chooses between an exact scan and the HNSW index. */
export interface VectorScanOptions {
  /**
   * At most this many matching rows are ranked by an exact scan instead of the HNSW index.
   * An exact scan of a few thousand vectors is cheaper than walking the graph past the
   * non-matching rows, and it is the only way a rare tag still yields `limit` rows.
   */
  exactScanMaxRows?: number;
  /** HNSW candidate list size; raised to the candidates fetched when that is larger. */
  efSearch?: number;
  /** The index path fetches `limit * candidateFactor` rows (at least `efSearch`) and keeps the best. */
  candidateFactor?: number;
  /** Rows an iterative index scan may visit before giving up (pgvector's `hnsw.max_scan_tuples`). */
  maxScanTuples?: number;
}

export interface FilteredVectorSearch<Row> {
  /** The rows matching the filter, ordered by distance, at most `limit`; run on the given transaction. */
  ranked(tx: Db, limit: number): Promise<Row[]>;
  /** The table and filter, to count matches on the filter alone (answered by its indexes). */
  table: PgTable;
  where: SQL;
  limit: number;
}

/**
 * Rows nearest to a query vector among those matching a filter, never fewer than
 * min(limit, matches): the filter is applied inside the query, before the LIMIT. Few matches are
 * ranked exactly; many go through the index with an iterative scan, falling back to an exact
 * scan when the index gives up early. The caller sorts the result by exact distance.
 */
export async function filteredVectorSearch<Row>(db: Db, search: FilteredVectorSearch<Row>, options: VectorScanOptions = {}): Promise<Row[]> {
  const exactScanMaxRows = options.exactScanMaxRows ?? 1000;
  const efSearch = options.efSearch ?? 40;
  const maxScanTuples = options.maxScanTuples ?? 20_000;
  const candidateFactor = options.candidateFactor ?? 4;
  const { limit } = search;

  return db.transaction(async (txn) => {
    const tx = txn as unknown as Db;
    // Counted on the filter alone: btree and GIN indexes answer it without reading the wide vector rows.
    const matching = await countUpTo(tx, search.table, search.where, exactScanMaxRows + 1);
    let rows: Row[] = [];
    if (matching > exactScanMaxRows) {
      // Iterative scans keep walking the graph until enough rows pass the filter, so a
      // filter is applied before the LIMIT without starving the result. Over-fetching and
      // re-sorting by exact distance repairs most of what relaxed ordering and a small
      // candidate list miss.
      const candidates = Math.max(limit * candidateFactor, efSearch);
      // set_config(..., true) is SET LOCAL; one statement saves round trips. Sorting is off so the
      // planner takes the HNSW scan it was sent here for: past a LIMIT of about a hundred it
      // prefers a sequential scan and sort, priced low because it cannot see that every 512-d
      // vector is TOASTed (10k chunks: 47 ms that way, 13 ms through the index).
      await tx.execute(sql`SELECT set_config('hnsw.ef_search', ${String(Math.min(candidates, 1000))}, true),
        set_config('hnsw.iterative_scan', 'relaxed_order', true),
        set_config('hnsw.max_scan_tuples', ${String(maxScanTuples)}, true),
        set_config('enable_sort', 'off', true)`);
      rows = await search.ranked(tx, candidates);
    }
    if (rows.length < Math.min(limit, matching)) {
      // Few matches, or the index gave up: rank every matching row exactly.
      await tx.execute(sql`SELECT set_config('enable_indexscan', 'off', true), set_config('enable_sort', 'on', true)`);
      rows = await search.ranked(tx, limit);
    }
    return rows;
  });
}

export async function countUpTo(db: Db, table: PgTable, where: SQL, cap: number): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM ${table} WHERE ${where} LIMIT ${cap}) AS m`,
  );
  return Number(row?.n ?? 0);
}
