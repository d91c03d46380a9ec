import { Placeholder, type SQL, is, sql } from 'drizzle-orm';
import { PgDialect, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../../db/database.js';
import { poolOf, preparedReadName, queryPrepared, runPreparedRead } from '../../db/prepared-reads.js';
import { queryRows } from '../../db/query-rows.js';
import { intArray, intArrayLiteral, textArray, textArrayLiteral } from '../../db/sql-arrays.js';
import { builtOnce } from '../../util/built-once.js';
import { type Bm25IndexTables, id } from './bm25-index-tables.js';

export interface Bm25Candidate {
  id: string;
  score: number;
  /** The columns `columns` asked for, by their alias, when it asked. */
  row?: Record<string, unknown>;
}

/** What a BM25 statement is built from besides the query's terms. */
export interface Bm25Shape {
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
  /**
   * Columns of `table` to bring along for each row, each aliased (`col AS name`): a caller that
   * shows rows needs no second query for the rows BM25 found.
   */
  columns?: SQL;
}

/**
 * A shape named by a key and made on demand: `key` names everything `make` builds (the table, the
 * filter with its values, the estimate, the columns), so equal keys promise equal SQL. On a server
 * pool its statement is built once per key and run again with other terms, and `make` is called
 * only then.
 */
export interface KeyedBm25Shape {
  key: string;
  make: () => Bm25Shape;
}

export interface Bm25QueryOptions {
  /** Query terms and how often each occurs in the query. */
  terms: ReadonlyMap<string, number>;
  limit: number;
  /** BM25's term saturation and length normalisation. */
  params: { k1: number; b: number };
  /**
   * Scores only when the tenant's postings were made by this analyzer: empty otherwise, so that
   * the caller tells a mismatch from no match (`readBm25Corpus`) only on an empty result, without
   * a round trip of its own before every search.
   */
  analyzerId?: string;
  shape: Bm25Shape | KeyedBm25Shape;
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
 * What a probe of the walk (one row by its key, the filter tested) costs against reading one
 * matching row for the join. The walk probes about limit x total / matching rows, the join reads
 * the matching rows, so the walk is taken only when matching² ≥ this x limit x total as well: in
 * a small corpus a filter's share can be large while its rows are few. On `bench:load`'s 2,120
 * memories (a four-word query over its 90-word vocabulary, page of 50, PostgreSQL, p50 of 300
 * interleaved), walk against join: a 7% tag (155 rows) 2.92 / 2.03 ms, 26% (560) 2.37 / 2.39,
 * 50% (1,059) 2.39 / 3.08, no filter 2.28 / 3.12: the two meet at 560² ≈ 3 x 50 x 2,120.
 */
const WALK_PROBE_COST = 3;

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
 * read by term: a few thousand postings for a query of mid-frequency words at 100k rows. A broad
 * filter (by `estimate`) is applied after: rows are read down the score order. A narrow one is
 * applied first: the matching rows are read, only their postings scored, and only the best rows
 * read again with their columns. A filter that cannot be estimated is counted in the statement
 * when it matches few rows (`NARROW_MAX_ROWS`), and its rows are probed for the query's terms when
 * that reads less than the terms' postings would (`PROBE_COST`); past that count, every matching
 * row is joined to the scores at once.
 */
export async function bm25Candidates(db: Db, t: Bm25IndexTables, tenantId: string, q: Bm25QueryOptions): Promise<Bm25Candidate[]> {
  if (q.terms.size === 0 || q.limit <= 0) return [];
  const terms = [...q.terms.keys()];
  const counts = terms.map((term) => q.terms.get(term)!);
  type Row = { id: string; score: number | string } & Record<string, unknown>;
  let rows: Row[];
  let withColumns: boolean;
  const keyed = 'key' in q.shape ? q.shape : undefined;
  const pool = keyed ? poolOf(db) : undefined;
  if (pool && keyed) {
    const { make } = keyed;
    const key = `${keyed.key}\u0000${tenantId}\u0000${q.limit}\u0000${q.params.k1}\u0000${q.params.b}\u0000${q.analyzerId ?? ''}`;
    const read = builtReadFor(key, () => buildRead(t, tenantId, q, make()));
    const values = read.fill({ terms: textArrayLiteral(terms), counts: intArrayLiteral(counts) });
    // Planned once where its plan holds for any values: the filter's rows are estimated when it
    // runs, or it has none to count. Counted in the statement (a user's turns), the plan for a
    // filter's typical share ran the LongMemEval turn search's text mode 10-15% slower than one
    // planned for its own values, so that one is planned at each run (an unnamed statement).
    rows = read.counted ? ((await pool.query({ text: read.text, values })).rows as Row[]) : await runPreparedRead<Row>(pool, read, values);
    withColumns = read.withColumns;
  } else {
    const shape = 'key' in q.shape ? q.shape.make() : q.shape;
    const statement = statementOf(t, tenantId, q, shape, { list: textArray(terms), counts: intArray(counts) });
    rows = countedIn(shape) ? await queryRows<Row>(db, statement) : await queryPrepared<Row>(db, statement);
    withColumns = shape.columns !== undefined;
  }
  return rows.map(({ id, score, ...row }) => ({ id, score: Number(score), ...(withColumns ? { row } : {}) }));
}

/** Whether a shape's filter is counted in its statement: it narrows, and nothing estimates its rows. */
const countedIn = (shape: Bm25Shape) => !shape.estimate && shape.narrows === true;

/** The query's terms as the statement reads them: their list and their counts in the query, both arrays. */
interface TermsSql {
  list: SQL;
  counts: SQL;
}

/** The statement `bm25Candidates` runs (see there). */
function statementOf(t: Bm25IndexTables, tenantId: string, q: Bm25QueryOptions, shape: Bm25Shape, terms: TermsSql): SQL {
  const k1 = sql`${q.params.k1}::float8`;
  const b = sql`${q.params.b}::float8`;
  const total = sql`s.${id(t.totalColumn)}`;
  const doc = id(t.documentColumn);
  const limit = sql.raw(String(Math.trunc(q.limit)));
  // The query's terms with their statistics, read once: the postings join these.
  const weights = sql`weights AS MATERIALIZED (
      SELECT q.term, q.qtf, t.df, ${total}::float8 AS total, s.total_length::float8 AS total_length
      FROM unnest(${terms.list}, ${terms.counts}) AS q(term, qtf)
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
  const extra = shape.columns ? sql`, ${shape.columns}` : sql``;
  // Every matching row read once, joined to the scores: the planner's choice of join.
  const joined = (gate: SQL) => sql`SELECT scored.doc::text AS id, scored.score AS score${extra} FROM scored
    JOIN ${shape.table} ON ${shape.idColumn} = scored.doc
    WHERE ${gate}${shape.where}
    ORDER BY scored.score DESC, scored.doc LIMIT ${limit}`;
  // The best rows of scores computed over the matching rows alone, with their columns.
  const bestOf = (scores: string, gate: SQL) => sql`SELECT top.doc::text AS id, top.score AS score${extra}
      FROM (SELECT doc, score FROM ${sql.identifier(scores)} ORDER BY score DESC, doc LIMIT ${limit}) top
      JOIN ${shape.table} ON ${shape.idColumn} = top.doc
      WHERE ${gate}
      ORDER BY top.score DESC, top.doc`;
  // The rows the filter matches, and the scores of their postings alone.
  const matching = sql`matching AS MATERIALIZED (SELECT ${shape.idColumn} AS doc FROM ${shape.table} WHERE ${shape.where})`;
  const scoredNarrow = scoredOver('scored_narrow', sql` AND p.${doc} IN (SELECT doc FROM matching)`);
  let statement: SQL;
  if (countedIn(shape)) {
    // Three shapes behind one-time tests of the matching rows, counted up to NARROW_MAX_ROWS in the
    // statement: few rows and rare enough terms, each row's postings of the query's terms probed
    // by the (row, term) index; few rows, the terms' postings read and the rows' kept; many rows,
    // every posting of the terms scored and the rows filtered after. The probe's subquery stays
    // a subquery (OFFSET 0): a probe per row, whatever the statistics say.
    const max = sql.raw(String(NARROW_MAX_ROWS));
    statement = sql`WITH ${weights}, ${matching},
      plan AS MATERIALIZED (
        SELECT c.n < ${max} AS narrow,
          c.n < ${max} AND c.n * ${sql.raw(String(PROBE_COST))} * cardinality(${terms.list}) < (
            SELECT coalesce(sum(t.df), 0) FROM ${id(t.termStats)} t WHERE t.tenant_id = ${tenantId} AND t.term = ANY(${terms.list})
          ) AS probe
        FROM (SELECT count(*) AS n FROM (SELECT 1 FROM matching LIMIT ${max}) capped) c
      ),
      ${scored},
      ${scoredNarrow},
      scored_probe AS MATERIALIZED (
        SELECT p.${doc} AS doc, ${score} AS score
        FROM matching m
        CROSS JOIN LATERAL (
          SELECT p.${doc}, p.term, p.tf, p.doc_length FROM ${id(t.postings)} p
          WHERE p.${doc} = m.doc AND p.term = ANY(${terms.list}) OFFSET 0
        ) p
        JOIN weights w ON w.term = p.term
        GROUP BY p.${doc}
      )
      (${bestOf('scored_probe', sql`(SELECT probe FROM plan)`)})
      UNION ALL
      (${bestOf('scored_narrow', sql`(SELECT narrow AND NOT probe FROM plan)`)})
      UNION ALL
      (${joined(sql`NOT (SELECT narrow FROM plan) AND `)})`;
  } else if (!shape.estimate) {
    statement = sql`WITH ${weights}, ${scored} ${joined(sql``)}`;
  } else {
    // Both shapes in one statement, each behind a one-time test of the estimate: the executor
    // runs only the one that passes. The walk's rows come in score order (a subquery keeps its
    // ORDER BY, and a nested loop keeps its outer side's), so its LIMIT stops the walk.
    // The estimate's subquery stays one (OFFSET 0): pulled up, it ran once for each use of `rows`.
    // Short of the walk, only the matching rows' postings are scored, and only the best rows read
    // with their columns: a 9% tag of 2,474 memories (a four-word query, 1,623 postings) took
    // 1.03 ms this way against 1.69-1.88 ms scoring every posting and joining the rows.
    statement = sql`WITH ${weights}, ${scored}, ${matching}, ${scoredNarrow},
      walk AS MATERIALIZED (
        SELECT e.rows >= ${WALK_MIN_SHARE}::float8 * ${total} AND e.rows * e.rows >= ${WALK_PROBE_COST}::float8 * ${limit} * ${total} AS yes
        FROM ${id(t.corpusStats)} s CROSS JOIN LATERAL (SELECT (${shape.estimate})::float8 AS rows OFFSET 0) e WHERE s.tenant_id = ${tenantId}
      )
      (SELECT r.doc::text AS id, r.score AS score${shape.columns ? sql`, f.*` : sql``} FROM (SELECT doc, score FROM scored ORDER BY score DESC, doc) r
        CROSS JOIN LATERAL (SELECT ${shape.columns ?? sql`1`} FROM ${shape.table} WHERE ${shape.idColumn} = r.doc AND ${shape.where} OFFSET 0) f
        WHERE (SELECT yes FROM walk)
        ORDER BY r.score DESC, r.doc LIMIT ${limit})
      UNION ALL
      (${bestOf('scored_narrow', sql`NOT (SELECT yes FROM walk)`)})`;
  }
  return statement;
}

const dialect = new PgDialect();

/** A statement built for a key: its name and text, and its parameters with the terms' places left open. */
interface BuiltRead {
  name: string;
  text: string;
  /** Its filter is counted in the statement (see `countedIn`): planned at each run. */
  counted: boolean;
  /** Each row brings the shape's columns. */
  withColumns: boolean;
  /** The parameters, the terms' placeholders filled from `values`. */
  fill(values: Record<string, unknown>): unknown[];
}

/**
 * Statements built for keys. Building one walked a tree of a few hundred parts (drizzle's
 * `sqlToQuery`), the same for every search of a filter: 15% of the server's main thread for text
 * searches of memories, where the statement then ran in under a millisecond.
 */
const builtReadFor = builtOnce<BuiltRead>(512);

function buildRead(t: Bm25IndexTables, tenantId: string, q: Bm25QueryOptions, shape: Bm25Shape): BuiltRead {
  const terms = { list: sql`${sql.placeholder('terms')}::text[]`, counts: sql`${sql.placeholder('counts')}::int[]` };
  const { sql: text, params } = dialect.sqlToQuery(statementOf(t, tenantId, q, shape, terms));
  const open = params.flatMap((p, i) => (is(p, Placeholder) ? [[i, p.name] as const] : []));
  return {
    name: preparedReadName(text),
    text,
    counted: countedIn(shape),
    withColumns: shape.columns !== undefined,
    fill(values) {
      const filled = params.slice();
      for (const [i, name] of open) filled[i] = values[name];
      return filled;
    },
  };
}

/** Query terms and their counts, as `bm25Candidates` takes them. */
export function queryTermCounts(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}
