import { type SQL, sql } from 'drizzle-orm';
import type { Tx } from '../../db/database.js';
import { queryRows } from '../../db/query-rows.js';
import { intArray, textArray } from '../../db/sql-arrays.js';
import { type Bm25IndexTables, id } from './bm25-index-tables.js';

// Elements per array parameter: large batches keep round trips few, well inside a message's size.
export const ARRAY_BATCH = 10_000;

/**
 * A transaction's changes to the tenant's document frequencies and totals, kept aside while it
 * writes postings and applied by its last statement (`applyBm25Changes`): a term row shared with
 * other writers is then locked only while that statement and the commit run, and every
 * transaction locks the rows it changes in one run, in term order, so that writers sharing the
 * corpus wait for each other instead of deadlocking.
 */
export interface Bm25Changes {
  /** Document frequency changes by term; those netting to zero are skipped. */
  readonly df: Map<string, number>;
  documents: number;
  length: number;
  /**
   * Writes whose results nothing in the transaction reads, held back to run as parts of its last
   * statement (`deferBm25Write`): each is a round trip fewer while the writer holds its place.
   */
  readonly writes: SQL[];
}

export const noBm25Changes = (): Bm25Changes => ({ df: new Map(), documents: 0, length: 0, writes: [] });

/** Writes held back at most: a transaction of many rows runs them in statements of this many, not one of all. */
export const MAX_DEFERRED_WRITES = 8;

/** `w0 AS (…), w1 AS (…)` of `writes`, to open a WITH list: data-modifying CTEs run to completion whether or not anything reads them. */
export const writesAsCtes = (writes: readonly SQL[]): SQL =>
  sql.join(
    writes.map((w, i) => sql`${sql.raw(`w${i}`)} AS (${w})`),
    sql`, `,
  );

/** The held-back writes as CTEs (`writesAsCtes`), emptied; null when none. */
function takeWrites(changes: Bm25Changes): SQL | null {
  if (changes.writes.length === 0) return null;
  const ctes = writesAsCtes(changes.writes);
  changes.writes.length = 0;
  return ctes;
}

/** Holds `write` back for the transaction's last statement; when enough wait, runs them all now. */
export async function deferBm25Write(tx: Tx, changes: Bm25Changes, write: SQL): Promise<void> {
  changes.writes.push(write);
  if (changes.writes.length >= MAX_DEFERRED_WRITES) await flushBm25Writes(tx, changes);
}

/** Runs the held-back writes now, in one statement: before anything that reads what they write. */
export async function flushBm25Writes(tx: Tx, changes: Bm25Changes): Promise<void> {
  const ctes = takeWrites(changes);
  if (ctes) await tx.execute(sql`WITH ${ctes} SELECT 1`);
}

/**
 * Applies `changes` to the tenant's document frequencies and totals: the term rows in term order
 * (code unit order, as COLLATE "C"), then the totals row, in one statement, and the term rows
 * left at zero deleted, the held-back writes run as parts of that statement. With `analyzerId`,
 * only if the tenant's postings are that analyzer's (which cannot change while its corpus is
 * held). False, and nothing to keep (the caller rolls back), when the tenant has no totals row or
 * another analyzer.
 */
export async function applyBm25Changes(tx: Tx, t: Bm25IndexTables, tenantId: string, changes: Bm25Changes, analyzerId?: string): Promise<boolean> {
  const terms = [...changes.df.keys()].filter((term) => changes.df.get(term) !== 0).sort();
  const analyzer = analyzerId === undefined ? sql`` : sql` AND analyzer_id = ${analyzerId}`;
  if (terms.length === 0 && changes.documents === 0 && changes.length === 0) {
    if (analyzerId === undefined) {
      await flushBm25Writes(tx, changes);
      return true;
    }
    const held = takeWrites(changes);
    const found = sql`SELECT 1 FROM ${id(t.corpusStats)} WHERE tenant_id = ${tenantId}${analyzer}`;
    return (await queryRows(tx, held ? sql`WITH ${held} ${found}` : found)).length > 0;
  }
  const dfs = (batch: readonly string[]) => sql`INSERT INTO ${id(t.termStats)} AS s (tenant_id, term, df)
      SELECT ${tenantId}, * FROM unnest(${textArray(batch)}, ${intArray(batch.map((term) => changes.df.get(term)!))})
      ON CONFLICT (tenant_id, term) DO UPDATE SET df = s.df + excluded.df
      RETURNING s.term, s.df`;
  const emptied: string[] = [];
  let last = 0;
  for (; terms.length - last > ARRAY_BATCH; last += ARRAY_BATCH) {
    const rows = await queryRows<{ term: string; df: number }>(tx, dfs(terms.slice(last, last + ARRAY_BATCH)));
    for (const r of rows) if (Number(r.df) <= 0) emptied.push(r.term);
  }
  const held = takeWrites(changes);
  // The totals row joins the terms' result, so it is locked only after every term row.
  const [settled] = await queryRows<{ emptied: string[] | string | null }>(
    tx,
    sql`WITH ${held ? sql`${held}, ` : sql``}dfs AS (${dfs(terms.slice(last))}),
        emptied AS (SELECT json_agg(term) AS terms FROM dfs WHERE df <= 0)
      UPDATE ${id(t.corpusStats)}
        SET ${id(t.totalColumn)} = ${id(t.totalColumn)} + ${changes.documents}::bigint, total_length = total_length + ${changes.length}::bigint
        FROM emptied WHERE tenant_id = ${tenantId}${analyzer}
      RETURNING emptied.terms AS emptied`,
  );
  if (!settled) return false;
  const more = typeof settled.emptied === 'string' ? (JSON.parse(settled.emptied) as string[]) : settled.emptied;
  emptied.push(...(more ?? []));
  for (let i = 0; i < emptied.length; i += ARRAY_BATCH) {
    const batch = emptied.slice(i, i + ARRAY_BATCH);
    // Rows this transaction holds already.
    await tx.execute(sql`DELETE FROM ${id(t.termStats)} WHERE tenant_id = ${tenantId} AND term = ANY(${textArray(batch)}) AND df <= 0`);
  }
  return true;
}
