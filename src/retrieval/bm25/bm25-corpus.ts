import { type SQL, sql } from 'drizzle-orm';
import type { Db, Tx } from '../../db/database.js';
import { queryRows } from '../../db/query-rows.js';
import { type Bm25IndexTables, id } from './bm25-index-tables.js';

export interface Bm25Corpus {
  total: number;
  totalLength: number;
  analyzerId: string;
}

/** The advisory lock key of the tenant's corpus: writers share it, whoever changes the corpus as a whole takes it alone. */
const corpusKey = (t: Bm25IndexTables, tenantId: string) => sql`hashtextextended(${`${t.corpusStats}/${tenantId}`}, 0)`;

/**
 * Takes the tenant's corpus alone for the rest of the transaction, creating its row if missing:
 * for what changes it as a whole (its analyzer, a clear, a reindex) and for writers that update
 * its totals as they go. It waits for the writers holding the corpus shared (`shareBm25Corpus`),
 * and writers coming after it wait for it: the advisory lock queues them in order, where a row
 * lock would let overlapping share holders keep it from ever being granted. The row lock
 * serialises it against writers that take only the row.
 */
export async function lockBm25Corpus(tx: Tx, t: Bm25IndexTables, tenantId: string, analyzerId: string): Promise<Bm25Corpus> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${corpusKey(t, tenantId)})`);
  // Locked first, created only when missing: one statement in the common case, and none that
  // writes (an upsert's no-op update would leave a row version behind every locked read).
  const locked = () =>
    queryRows<{ total: string | number; total_length: string | number; analyzer_id: string }>(
      tx,
      sql`SELECT ${id(t.totalColumn)} AS total, total_length, analyzer_id FROM ${id(t.corpusStats)} WHERE tenant_id = ${tenantId} FOR UPDATE`,
    );
  let [row] = await locked();
  if (!row) {
    await tx.execute(sql`INSERT INTO ${id(t.corpusStats)} (tenant_id, ${id(t.totalColumn)}, total_length, analyzer_id)
      VALUES (${tenantId}, 0, 0, ${analyzerId}) ON CONFLICT (tenant_id) DO NOTHING`);
    [row] = await locked();
  }
  return { total: Number(row!.total), totalLength: Number(row!.total_length), analyzerId: row!.analyzer_id };
}

/**
 * Holds the tenant's corpus shared for the rest of the transaction: any number of writers at
 * once, none while `lockBm25Corpus` holds it. Such a writer leaves the term and totals rows alone
 * until its last statement (`applyBm25Changes`), so that their locks are held only while it commits.
 */
export async function shareBm25Corpus(tx: Tx, t: Bm25IndexTables, tenantId: string): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock_shared(${corpusKey(t, tenantId)})`);
}

/**
 * `shareBm25Corpus` as a condition (true) for another statement to evaluate first: an
 * uncorrelated subquery, which the server runs once, before that statement reads a row.
 */
export const bm25CorpusShare = (t: Bm25IndexTables, tenantId: string): SQL =>
  sql`(SELECT true FROM (SELECT pg_advisory_xact_lock_shared(${corpusKey(t, tenantId)})) shared)`;

/** The tenant's corpus statistics as last committed; `null` before its first write. */
export async function readBm25Corpus(db: Db, t: Bm25IndexTables, tenantId: string): Promise<Bm25Corpus | null> {
  const [row] = await queryRows<{ total: string | number; total_length: string | number; analyzer_id: string }>(
    db,
    sql`SELECT ${id(t.totalColumn)} AS total, total_length, analyzer_id FROM ${id(t.corpusStats)} WHERE tenant_id = ${tenantId}`,
  );
  return row ? { total: Number(row.total), totalLength: Number(row.total_length), analyzerId: row.analyzer_id } : null;
}

/** Records the analyzer of the tenant's postings; only valid with its lock held and none of its postings left. */
export async function setBm25Analyzer(tx: Tx, t: Bm25IndexTables, tenantId: string, analyzerId: string): Promise<void> {
  await tx.execute(sql`UPDATE ${id(t.corpusStats)} SET analyzer_id = ${analyzerId} WHERE tenant_id = ${tenantId}`);
}

/** Empties the tenant's index: its postings, its document frequencies, and its totals. */
export async function clearBm25Index(tx: Tx, t: Bm25IndexTables, tenantId: string): Promise<void> {
  await tx.execute(sql`DELETE FROM ${id(t.postings)} WHERE tenant_id = ${tenantId}`);
  await tx.execute(sql`DELETE FROM ${id(t.termStats)} WHERE tenant_id = ${tenantId}`);
  await tx.execute(sql`UPDATE ${id(t.corpusStats)} SET ${id(t.totalColumn)} = 0, total_length = 0 WHERE tenant_id = ${tenantId}`);
}
