import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db, Tx } from '../../db/database.js';
import { queryRows } from '../../db/query-rows.js';
import { intArray, textArray, uuidArray } from '../../db/sql-arrays.js';

/**
 * The tables of one BM25 index in the database: postings (tenant_id, `<document>`, term, tf), term
 * statistics (tenant_id, term, df) and corpus statistics with one row per tenant (tenant_id,
 * `<total>`, total_length, analyzer_id). Chunks, memories and turns each have one, with the same shape.
 *
 * Every function takes the tenant, and touches that tenant's rows only: each tenant is a corpus
 * of its own, so one tenant's writes never move another's document frequencies or scores, and
 * its corpus locks order that tenant's writers only.
 */
export interface Bm25IndexTables {
  postings: string;
  /** The postings column naming the indexed row. */
  documentColumn: string;
  termStats: string;
  corpusStats: string;
  /** The corpus statistics column counting indexed rows. */
  totalColumn: string;
}

export interface Bm25Corpus {
  total: number;
  totalLength: number;
  analyzerId: string;
}

/** One indexed row: its id, the analyzer's term frequencies of its text, and its length in terms. */
export interface Bm25Document {
  id: string;
  termFrequencies: ReadonlyMap<string, number>;
  length: number;
}

export interface Bm25Candidate {
  id: string;
  score: number;
  /** The columns `columns` asked for, by their alias, when it asked. */
  row?: Record<string, unknown>;
}

const id = (name: string) => sql.identifier(name);

// Elements per array parameter: large batches keep round trips few, well inside a message's size.
const ARRAY_BATCH = 10_000;
// Beyond a batch or two the statement's own cost dwarfs a round trip's.
const MAX_WRITES_PER_STATEMENT = 3;

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
}

export const noBm25Changes = (): Bm25Changes => ({ df: new Map(), documents: 0, length: 0 });

/**
 * Adds the postings of the tenant's rows not indexed before, their document frequencies and
 * their count and lengths; with `changes`, the frequencies and totals go there instead.
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
  // Data-modifying CTEs run to completion whether or not anything reads them.
  if (writes.length === 1 || writes.length > MAX_WRITES_PER_STATEMENT) {
    for (const w of writes) await tx.execute(w);
    return;
  }
  const ctes = writes.slice(0, -1).map((w, i) => sql`${sql.raw(`w${i}`)} AS (${w})`);
  await tx.execute(sql`WITH ${sql.join(ctes, sql`, `)} ${writes[writes.length - 1]!}`);
}

/**
 * Applies `changes` to the tenant's document frequencies and totals: the term rows in term order
 * (code unit order, as COLLATE "C"), then the totals row, in one statement, and the term rows
 * left at zero deleted. With `analyzerId`, only if the tenant's postings are that analyzer's
 * (which cannot change while its corpus is held). False, and nothing to keep (the caller rolls
 * back), when the tenant has no totals row or another analyzer.
 */
export async function applyBm25Changes(tx: Tx, t: Bm25IndexTables, tenantId: string, changes: Bm25Changes, analyzerId?: string): Promise<boolean> {
  const terms = [...changes.df.keys()].filter((term) => changes.df.get(term) !== 0).sort();
  const analyzer = analyzerId === undefined ? sql`` : sql` AND analyzer_id = ${analyzerId}`;
  if (terms.length === 0 && changes.documents === 0 && changes.length === 0) {
    if (analyzerId === undefined) return true;
    return (await queryRows(tx, sql`SELECT 1 FROM ${id(t.corpusStats)} WHERE tenant_id = ${tenantId}${analyzer}`)).length > 0;
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
  // The totals row joins the terms' result, so it is locked only after every term row.
  const [settled] = await queryRows<{ emptied: string[] | string | null }>(
    tx,
    sql`WITH dfs AS (${dfs(terms.slice(last))}),
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

/**
 * Deletes the tenant's postings of the rows `documentIds` selects (a query returning their ids)
 * and takes them out of its document frequencies, or, with `changes`, out of those. The row
 * count and length totals are the caller's to adjust (`adjustBm25Totals`), since only it knows
 * which of those rows were indexed.
 */
export async function removeBm25Postings(tx: Tx, t: Bm25IndexTables, tenantId: string, documentIds: SQL, changes?: Bm25Changes): Promise<void> {
  const own = changes ?? noBm25Changes();
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

/** Empties the tenant's index: its postings, its document frequencies, and its totals. */
export async function clearBm25Index(tx: Tx, t: Bm25IndexTables, tenantId: string): Promise<void> {
  await tx.execute(sql`DELETE FROM ${id(t.postings)} WHERE tenant_id = ${tenantId}`);
  await tx.execute(sql`DELETE FROM ${id(t.termStats)} WHERE tenant_id = ${tenantId}`);
  await tx.execute(sql`UPDATE ${id(t.corpusStats)} SET ${id(t.totalColumn)} = 0, total_length = 0 WHERE tenant_id = ${tenantId}`);
}

export interface Bm25QueryOptions {
  /** Query terms and how often each occurs in the query. */
  terms: ReadonlyMap<string, number>;
  /** The indexed table and its id column. */
  table: PgTable;
  idColumn: PgColumn;
  /** Conditions on `table` (its tenant included), applied inside the query, before the LIMIT. */
  where: SQL;
  /**
   * An upper bound of the rows `where` matches (a scalar SQL expression over statistics the
   * writers keep), when the corpus keeps them: it chooses how the filter is applied.
   */
  estimate?: SQL;
  /** `where` narrows beyond the tenant: without an `estimate`, its matches are counted to choose a plan. */
  narrows?: boolean;
  limit: number;
  /**
   * Columns of `table` to bring along for each row, each aliased (`col AS name`): a caller that
   * shows rows needs no second query for the rows BM25 found.
   */
  columns?: SQL;
  /** BM25's term saturation and length normalisation. */
  params: { k1: number; b: number };
  /**
   * Scores only when the tenant's postings were made by this analyzer: empty otherwise, so that
   * the caller tells a mismatch from no match (`readBm25Corpus`) only on an empty result, without
   * a round trip of its own before every search.
   */
  analyzerId?: string;
}

/**
 * A filter matching at least this share of the tenant's indexed rows is tested row by row down
 * the score order, stopping once the page is full: about limit / share rows read. Below it the
 * matching rows are read once (by their index) and joined to the scores. At 100k memories and a
 * page of 50, the walk reads ~50 rows unfiltered and ~500 over a 10% tag, where reading the tag's
 * 10,000 rows took 12 ms; over a 0.2% tag it would read every scored row.
 */
const WALK_MIN_SHARE = 0.05;

/**
 * Below this many rows matching its filter, a search with no estimate of them scores only their
 * postings: at 21k turns (LongMemEval, one user's ~240 of them matching, a five-term question),
 * scoring every posting of the query's terms and then filtering took 21 ms, scoring the user's
 * only 9 ms (EXPLAIN ANALYZE on PostgreSQL, warm). Counted in the statement, up to this many.
 */
const NARROW_MAX_ROWS = 5_000;

/**
 * What one probe of the postings by row and term (a matching row, a query term) costs against
 * reading one posting of the query's terms: the probes are taken when matching rows x terms x
 * this is below the terms' document frequencies summed. At 20k turns (936k postings, `bench:load`'s
 * 90-word vocabulary), a user's 200 turns and a five-term query: the 1,000 probes took 7.0 ms,
 * reading the terms' 37k postings and keeping the user's took 22 ms (PostgreSQL, warm): ~7 µs a
 * probe against ~0.6 µs a posting read.
 */
const PROBE_COST = 10;

/**
 * The tenant's rows by BM25 over its postings and statistics, computed in the database; OR over
 * the query's terms. The formula is bm25.ts's, term for term: Lucene's idf times the saturated,
 * length-normalised tf, a term repeated in the query counting each time. Empty when the tenant
 * has nothing indexed.
 *
 * The scores come from the postings alone (each carries its row's length, and the key covers it),
 * read by term: a few thousand postings for a query of mid-frequency words at 100k rows. Only then
 * are rows read, to apply the filter: down the score order when the filter is broad (by
 * `estimate`), or all matching rows joined at once when it is narrow or cannot be estimated. A
 * filter that cannot be estimated and matches few rows (`NARROW_MAX_ROWS`) is applied first
 * instead: only those rows' postings are scored, each row probed for the query's terms when that
 * reads less than the terms' postings would (`PROBE_COST`).
 */
export async function bm25Candidates(db: Db, t: Bm25IndexTables, tenantId: string, q: Bm25QueryOptions): Promise<Bm25Candidate[]> {
  if (q.terms.size === 0 || q.limit <= 0) return [];
  const terms = [...q.terms.keys()];
  const k1 = sql`${q.params.k1}::float8`;
  const b = sql`${q.params.b}::float8`;
  const total = sql`s.${id(t.totalColumn)}`;
  const doc = id(t.documentColumn);
  const limit = sql.raw(String(Math.trunc(q.limit)));
  // The query's terms with their statistics, read once: the postings join these.
  const weights = sql`weights AS MATERIALIZED (
      SELECT q.term, q.qtf, t.df, ${total}::float8 AS total, s.total_length::float8 AS total_length
      FROM unnest(${textArray(terms)}, ${intArray(terms.map((term) => q.terms.get(term)!))}) AS q(term, qtf)
      JOIN ${id(t.corpusStats)} s ON s.tenant_id = ${tenantId} AND ${total} > 0${q.analyzerId === undefined ? sql`` : sql` AND s.analyzer_id = ${q.analyzerId}`}
      JOIN ${id(t.termStats)} t ON t.tenant_id = ${tenantId} AND t.term = q.term
    )`;
  const score = sql`SUM(w.qtf * ln(1 + (w.total - w.df + 0.5::float8) / (w.df + 0.5::float8))
          * p.tf * (${k1} + 1) / (p.tf + ${k1} * (1 - ${b} + ${b} * p.doc_length / (w.total_length / w.total))))`;
  // Read by term first (the key's (tenant, term) prefix) and materialised: left to itself the
  // planner may instead walk every row of the tenant and probe its postings, which is quadratic;
  // it does so whenever statistics are missing, and PGlite never runs autovacuum's ANALYZE.
  // `among`: only the postings of these rows are scored.
  const scoredOver = (name: string, among: SQL) => sql`${sql.identifier(name)} AS MATERIALIZED (
      SELECT p.${doc} AS doc, ${score} AS score
      FROM weights w
      JOIN ${id(t.postings)} p ON p.tenant_id = ${tenantId} AND p.term = w.term${among}
      GROUP BY p.${doc}
    )`;
  const scored = scoredOver('scored', sql``);
  const extra = q.columns ? sql`, ${q.columns}` : sql``;
  // Every matching row read once, joined to the scores: the planner's choice of join.
  const joined = (gate: SQL) => sql`SELECT scored.doc::text AS id, scored.score AS score${extra} FROM scored
    JOIN ${q.table} ON ${q.idColumn} = scored.doc
    WHERE ${gate}${q.where}
    ORDER BY scored.score DESC, scored.doc LIMIT ${limit}`;
  // The best rows of scores computed over the matching rows alone, with their columns.
  const bestOf = (scores: string, gate: SQL) => sql`SELECT top.doc::text AS id, top.score AS score${extra}
      FROM (SELECT doc, score FROM ${sql.identifier(scores)} ORDER BY score DESC, doc LIMIT ${limit}) top
      JOIN ${q.table} ON ${q.idColumn} = top.doc
      WHERE ${gate}
      ORDER BY top.score DESC, top.doc`;
  let statement: SQL;
  if (!q.estimate && q.narrows) {
    // Three shapes behind one-time tests of the matching rows, counted up to NARROW_MAX_ROWS in the
    // statement: few rows and rare enough terms, each row's postings of the query's terms probed
    // by the (row, term) index; few rows, the terms' postings read and the rows' kept; many rows,
    // every posting of the terms scored and the rows filtered after. The probe's subquery stays
    // a subquery (OFFSET 0): a probe per row, whatever the statistics say.
    const max = sql.raw(String(NARROW_MAX_ROWS));
    statement = sql`WITH ${weights}, matching AS MATERIALIZED (SELECT ${q.idColumn} AS doc FROM ${q.table} WHERE ${q.where}),
      plan AS MATERIALIZED (
        SELECT c.n < ${max} AS narrow,
          c.n < ${max} AND c.n * ${terms.length * PROBE_COST} < (
            SELECT coalesce(sum(t.df), 0) FROM ${id(t.termStats)} t WHERE t.tenant_id = ${tenantId} AND t.term = ANY(${textArray(terms)})
          ) AS probe
        FROM (SELECT count(*) AS n FROM (SELECT 1 FROM matching LIMIT ${max}) capped) c
      ),
      ${scored},
      ${scoredOver('scored_narrow', sql` AND p.${doc} IN (SELECT doc FROM matching)`)},
      scored_probe AS MATERIALIZED (
        SELECT p.${doc} AS doc, ${score} AS score
        FROM matching m
        CROSS JOIN LATERAL (
          SELECT p.${doc}, p.term, p.tf, p.doc_length FROM ${id(t.postings)} p
          WHERE p.${doc} = m.doc AND p.term = ANY(${textArray(terms)}) OFFSET 0
        ) p
        JOIN weights w ON w.term = p.term
        GROUP BY p.${doc}
      )
      (${bestOf('scored_probe', sql`(SELECT probe FROM plan)`)})
      UNION ALL
      (${bestOf('scored_narrow', sql`(SELECT narrow AND NOT probe FROM plan)`)})
      UNION ALL
      (${joined(sql`NOT (SELECT narrow FROM plan) AND `)})`;
  } else if (!q.estimate) {
    statement = sql`WITH ${weights}, ${scored} ${joined(sql``)}`;
  } else {
    // Both shapes in one statement, each behind a one-time test of the estimate: the executor
    // runs only the one that passes. The walk's rows come in score order (a subquery keeps its
    // ORDER BY, and a nested loop keeps its outer side's), so its LIMIT stops the walk.
    statement = sql`WITH ${weights}, ${scored},
      walk AS MATERIALIZED (
        SELECT (${q.estimate})::float8 >= ${WALK_MIN_SHARE}::float8 * ${total} AS yes
        FROM ${id(t.corpusStats)} s WHERE s.tenant_id = ${tenantId}
      )
      (SELECT r.doc::text AS id, r.score AS score${q.columns ? sql`, f.*` : sql``} FROM (SELECT doc, score FROM scored ORDER BY score DESC, doc) r
        CROSS JOIN LATERAL (SELECT ${q.columns ?? sql`1`} FROM ${q.table} WHERE ${q.idColumn} = r.doc AND ${q.where} OFFSET 0) f
        WHERE (SELECT yes FROM walk)
        ORDER BY r.score DESC, r.doc LIMIT ${limit})
      UNION ALL
      (${joined(sql`NOT (SELECT yes FROM walk) AND `)})`;
  }
  const rows = await queryRows<{ id: string; score: number | string } & Record<string, unknown>>(db, statement);
  return rows.map(({ id, score, ...row }) => ({ id, score: Number(score), ...(q.columns ? { row } : {}) }));
}

/** Query terms and their counts, as `bm25Candidates` takes them. */
export function queryTermCounts(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

/** The BM25 index of document chunks. */
export const CHUNK_BM25: Bm25IndexTables = Object.freeze({
  postings: 'postings',
  documentColumn: 'chunk_id',
  termStats: 'term_stats',
  corpusStats: 'corpus_stats',
  totalColumn: 'total_chunks',
});

/** The BM25 index of memories. */
export const MEMORY_BM25: Bm25IndexTables = Object.freeze({
  postings: 'memory_postings',
  documentColumn: 'memory_id',
  termStats: 'memory_term_stats',
  corpusStats: 'memory_corpus_stats',
  totalColumn: 'total',
});

/** The BM25 index of past conversation turns. */
export const TURN_BM25: Bm25IndexTables = Object.freeze({
  postings: 'turn_postings',
  documentColumn: 'turn_id',
  termStats: 'turn_term_stats',
  corpusStats: 'turn_corpus_stats',
  totalColumn: 'total',
});
