import { type SQL, sql } from 'drizzle-orm';
import type { Tx } from '../../db/database.js';
import { queryRows } from '../../db/query-rows.js';
import { intArray, textArray, uuidArray } from '../../db/sql-arrays.js';
import { ARRAY_BATCH, type Bm25Changes, applyBm25Changes, deferBm25Write, flushBm25Writes, noBm25Changes, writesAsCtes } from './bm25-changes.js';
import { type Bm25IndexTables, id } from './bm25-index-tables.js';

/** One indexed row: its id, the analyzer's term frequencies of its text, and its length in terms. */
export interface Bm25Document {
  id: string;
  termFrequencies: ReadonlyMap<string, number>;
  length: number;
}

// Beyond a batch or two the statement's own cost dwarfs a round trip's.
const MAX_WRITES_PER_STATEMENT = 3;

/**
 * Postings a writer holds back for its last statement at most. That statement locks the term rows
 * first and runs its held-back writes after (they are CTEs nothing reads): a large insert there
 * would keep every other writer of those terms waiting for it, so that two imports' inserts ran in
 * turn. At about 17 µs a posting on a server, 256 hold the rows some 4 ms, against a round trip's 0.2.
 */
export const MAX_DEFERRED_POSTINGS = 256;

/**
 * Adds the postings of the tenant's rows not indexed before, their document frequencies and
 * their count and lengths; with `changes`, the frequencies and totals go there instead, and
 * postings of a few rows (`MAX_DEFERRED_POSTINGS`) are held back there for the last statement.
 */
export async function addBm25Documents(tx: Tx, t: Bm25IndexTables, tenantId: string, documents: readonly Bm25Document[], changes?: Bm25Changes): Promise<void> {
  if (documents.length === 0) return;
  const ids: string[] = [];
  const terms: string[] = [];
  const tfs: number[] = [];
  const lengths: number[] = [];
  const documentFrequency = new Map<string, number>();
  let totalLength = 0;
  for (const d of documents) {
    totalLength += d.length;
    for (const [term, tf] of d.termFrequencies) {
      ids.push(d.id);
      terms.push(term);
      tfs.push(tf);
      lengths.push(d.length);
      documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    }
  }
  const writes: SQL[] = [];
  for (let i = 0; i < terms.length; i += ARRAY_BATCH) {
    const end = i + ARRAY_BATCH;
    writes.push(sql`INSERT INTO ${id(t.postings)} (tenant_id, ${id(t.documentColumn)}, term, tf, doc_length)
      SELECT ${tenantId}, * FROM unnest(${uuidArray(ids.slice(i, end))}, ${textArray(terms.slice(i, end))}, ${intArray(tfs.slice(i, end))}, ${intArray(lengths.slice(i, end))})`);
  }
  if (changes) {
    for (const [term, n] of documentFrequency) changes.df.set(term, (changes.df.get(term) ?? 0) + n);
    changes.documents += documents.length;
    changes.length += totalLength;
    if (terms.length === 0) return;
    if (terms.length <= MAX_DEFERRED_POSTINGS) return deferBm25Write(tx, changes, writes[0]!);
    for (const w of writes) await tx.execute(w);
    return;
  }
  // Sorted as `applyBm25Changes` sorts, though whoever calls this without `changes` holds the corpus alone.
  const distinct = [...documentFrequency.keys()].sort();
  for (let i = 0; i < distinct.length; i += ARRAY_BATCH) {
    const batch = distinct.slice(i, i + ARRAY_BATCH);
    writes.push(sql`INSERT INTO ${id(t.termStats)} (tenant_id, term, df)
      SELECT ${tenantId}, * FROM unnest(${textArray(batch)}, ${intArray(batch.map((term) => documentFrequency.get(term)!))})
      ON CONFLICT (tenant_id, term) DO UPDATE SET df = ${id(t.termStats)}.df + excluded.df`);
  }
  writes.push(totalsUpdate(t, tenantId, documents.length, totalLength));
  // Each statement costs a round trip, and on PGlite a fixed toll of protocol work on the main
  // thread: the writes of a small batch (one document's chunks, one memory) go as one statement.
  if (writes.length === 1 || writes.length > MAX_WRITES_PER_STATEMENT) {
    for (const w of writes) await tx.execute(w);
    return;
  }
  await tx.execute(sql`WITH ${writesAsCtes(writes.slice(0, -1))} ${writes[writes.length - 1]!}`);
}

/**
 * Deletes the tenant's postings of the rows `documentIds` selects (a query returning their ids)
 * and takes them out of its document frequencies, or, with `changes`, out of those. The row
 * count and length totals are the caller's to adjust (`adjustBm25Totals`), since only it knows
 * which of those rows were indexed.
 */
export async function removeBm25Postings(tx: Tx, t: Bm25IndexTables, tenantId: string, documentIds: SQL, changes?: Bm25Changes): Promise<void> {
  const own = changes ?? noBm25Changes();
  // Postings held back for the last statement may be among those to delete.
  await flushBm25Writes(tx, own);
  const gone = await queryRows<{ term: string; n: number }>(
    tx,
    sql`WITH gone AS (
        DELETE FROM ${id(t.postings)} p WHERE p.tenant_id = ${tenantId} AND p.${id(t.documentColumn)} IN (${documentIds}) RETURNING p.term
      )
      SELECT term, count(*)::int AS n FROM gone GROUP BY term`,
  );
  for (const { term, n } of gone) own.df.set(term, (own.df.get(term) ?? 0) - Number(n));
  if (!changes && gone.length > 0) await applyBm25Changes(tx, t, tenantId, own);
}

/**
 * Indexes one of the tenant's rows anew: its postings replaced by those of `document`, its
 * document frequencies moved by the difference (terms kept are not touched), and the totals by
 * its change of length (`previousLength`: as indexed, null if it was not), into `changes` if given.
 */
export async function replaceBm25Document(
  tx: Tx,
  t: Bm25IndexTables,
  tenantId: string,
  document: Bm25Document,
  previousLength: number | null,
  changes?: Bm25Changes,
): Promise<void> {
  const own = changes ?? noBm25Changes();
  await removeBm25Postings(tx, t, tenantId, sql`SELECT ${document.id}::uuid`, own);
  await addBm25Documents(tx, t, tenantId, [document], own);
  own.documents -= previousLength === null ? 0 : 1;
  own.length -= previousLength ?? 0;
  if (!changes) await applyBm25Changes(tx, t, tenantId, own);
}

export async function adjustBm25Totals(tx: Tx, t: Bm25IndexTables, tenantId: string, documents: number, length: number): Promise<void> {
  if (documents === 0 && length === 0) return;
  await tx.execute(totalsUpdate(t, tenantId, documents, length));
}

const totalsUpdate = (t: Bm25IndexTables, tenantId: string, documents: number, length: number) =>
  sql`UPDATE ${id(t.corpusStats)}
    SET ${id(t.totalColumn)} = ${id(t.totalColumn)} + ${documents}::bigint, total_length = total_length + ${length}::bigint
    WHERE tenant_id = ${tenantId}`;
