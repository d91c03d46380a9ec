import type { PGlite, Transaction } from '@electric-sql/pglite';
import { type SQL, sql } from 'drizzle-orm';
import { type PgColumn, PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { builtOnce } from '../util/built-once.js';
import type { Db } from './database.js';
import { onSearchConnection, vectorSearchPoolOf } from './vector-search-connections.js';
import { vectorToBinary } from './vector-wire-format.js';

/** How a filtered nearest-neighbour search chooses between an exact scan and the HNSW index. */
export interface VectorScanOptions {
  /**
   * At most this many matching rows (by the search's estimate) are ranked by an exact scan
   * instead of the HNSW index. An exact scan of a few thousand vectors is cheaper than walking the
   * graph past the non-matching rows, and it is the only way a rare tag still yields `limit` rows.
   */
  exactScanMaxRows?: number;
  /**
   * Past `exactScanMaxRows`, over an estimate the writers' statistics give, a filter is still
   * ranked exactly while its rows cost less that way than the rows a walk passes to find the
   * ones it fetches: estimate × estimate ≤ walkCost × fetched × the table's rows (a walk passes
   * about table rows / estimate of them for each matching row). What a walk costs per row it
   * passes, in exact-scan rows. 0: only `exactScanMaxRows` decides. Default WALK_COST.
   */
  walkCost?: number;
  /** HNSW candidate list size; raised to the rows fetched when that is larger. Default 80. */
  efSearch?: number;
  /** Rows an iterative index scan may visit before giving up (pgvector's `hnsw.max_scan_tuples`). */
  maxScanTuples?: number;
  /**
   * Over a filter, how many times `limit` matching rows the index path makes sure of (no more
   * than ef_search), for the caller to keep the best `limit`. Past the first candidate list, an
   * iterative scan's order is relaxed: over a selective filter it finds the best rows but not
   * always first. Where the estimate says a list at most WIDEST_LIST times ef_search long holds
   * that many matching rows, the list is widened to it and `limit` rows are fetched, all from
   * inside it, in exact order; else `limit * candidateFactor` rows are fetched past it. An exact
   * ranking fetches `limit`. Default 1.
   */
  candidateFactor?: number;
}

/**
 * A walk's cost per row it passes, in rows of an exact scan. 100k memories of `bench:peers` with
 * their vectors in the row, topK 10 repaired (20 rows fetched), p50: an exact scan takes 2.0 ms for
 * 1,000 rows, 5.4 for 2,000, 7.2 for 2,941, 11.5 for 4,848 (2.4–2.7 µs a row); the walk over the
 * same uncorrelated tags 21.4, 12.8 and 6.5 ms for the last three (16–21 µs a row passed, 1,000,
 * 680 and 412 rows) at recall 0.993–1.000. 6 takes the exact scan up to about 3,500 of 100k rows.
 */
const WALK_COST = 6;

/** The HNSW candidate list by default: see MEMORY_HNSW in vector-space.ts for what it finds. */
export const DEFAULT_EF_SEARCH = 80;

export interface FilteredVectorSearch {
  table: PgTable;
  /** The select list, each column aliased to the name its row field gets; `distance` is added. */
  columns: SQL;
  embedding: PgColumn;
  /** The filter (tenant included), applied inside the query before the LIMIT. */
  where: SQL;
  /**
   * An upper bound of the rows `where` matches, as a scalar SQL expression read in the statement
   * that sets the search up (statistics the writers keep). Default: the matches counted, capped
   * just past `exactScanMaxRows`.
   */
  estimate?: SQL;
  /**
   * Whether `estimate` is the count of the rows `where` matches, up to the writers' small
   * omissions, rather than a bound: only then may a repaired walk fetch from a widened list
   * (see `candidateFactor`), which trusts the share of the table it gives.
   */
  estimateCounts?: boolean;
}

const dialect = new PgDialect();
// Where the query vector goes in a statement; replaced per call, so that the rest is built once.
const VECTOR = Object.freeze({ vectorSlot: true });
// Where the ranked statement's row count goes: the setup's `walk_rows`, or `limit` on the exact fallback.
const ROWS = Object.freeze({ rowsSlot: true });

interface Statement {
  text: string;
  params: unknown[];
}

interface Built {
  /** Sets the search up for the path the estimate chooses, and returns whether it is the exact one (`exact`). */
  setup: Statement;
  ranked: Statement;
  /**
   * For the server's search connections, every value inlined. Prepared, the vector their one
   * parameter ($1): `search` reads the estimate and ranks by the path it chooses, in one
   * statement, each row with the estimate (a row of nulls with it when nothing matched); `exact`
   * ranks every matching row. As messages, split where the vector goes: `message` is setup and
   * ranked, `exactMessage` the exact scan's fallback. A search without a key only ever runs the
   * messages. Null when a value has no literal.
   */
  server: {
    search: { name: string; text: string };
    exact: { name: string; text: string };
    message: string[];
    exactMessage: string[];
  } | null;
}

/**
 * How many times ef_search the index path's first candidate list may be widened to hold the rows
 * a repaired order wants (see `candidateFactor`). 100k memories of `bench:peers`, topK 10, replayed
 * in one process (p50, recall@10): over a 10% tag, 20 rows past a list of 80 2.96 ms at 1.000, 10
 * rows from a list of 200 2.28 ms at 1.000 (120: 0.999; 300: 2.66 ms); over a 2% tag a list of
 * 1,000 17.6 ms at 0.988, against 12.5 ms at 0.992 for 20 rows past a list of 80.
 */
const WIDEST_LIST = 4;

const EXACT_SETUP = `SELECT set_config('enable_indexscan', 'off', true), set_config('enable_sort', 'on', true)`;

const builtFor = builtOnce<Built>(512);

/**
 * Rows nearest to a query vector among those matching a filter, never fewer than
 * min(limit, matches): the filter is applied inside the query, before the LIMIT. Few matches (by
 * the estimate) are ranked exactly; more go through the index with an iterative scan, falling
 * back to an exact scan when the index comes short. The caller sorts the result by exact
 * distance (the iterative scan's order is relaxed).
 *
 * On the server a search runs on a connection of the vector search's own
 * (vector-search-connections.ts), its filter's values written in (so its plan knows their
 * selectivity). Its first run there is one message of two statements, the vector as text: the
 * estimate with the plan and HNSW settings for the implicit transaction (SET LOCAL), then the
 * ranked SELECT. From its second run there it is one prepared statement, the vector bound in
 * binary, in which the estimate decides between the index path and the exact path, each behind a
 * one-time filter. On PGlite (and a pool without search connections), the two statements with
 * bound parameters in a transaction.
 *
 * `search.key` names everything `make` builds (the filter's values included): equal keys promise
 * equal SQL, so the statements are built once per key and reused. Without a key they are built
 * on every call.
 */
export async function filteredVectorSearch<Row>(
  db: Db,
  search: { key?: string; make: () => FilteredVectorSearch },
  vector: readonly number[],
  limit: number,
  options: VectorScanOptions = {},
): Promise<(Row & { distance: number })[]> {
  const exactScanMaxRows = Math.max(0, Math.trunc(options.exactScanMaxRows ?? 1000));
  const ef = Math.trunc(options.efSearch ?? DEFAULT_EF_SEARCH);
  // Over-fetching stays within the candidate list: a hybrid search's 50 candidates over a tag
  // fetched 200 rows with their payload (20 ms at 100k) for a repair fusion hardly needs.
  const fetched = Math.max(limit, Math.min(limit * Math.max(1, Math.trunc(options.candidateFactor ?? 1)), ef));
  const efSearch = Math.min(1000, Math.max(ef, fetched));
  const maxScanTuples = Math.max(1, Math.trunc(options.maxScanTuples ?? 20_000));
  const walkCost = Math.max(0, options.walkCost ?? WALK_COST);
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
  if (!vector.every(Number.isFinite)) throw new RangeError('a query vector holds only finite numbers');
  const key = search.key === undefined ? undefined : `${search.key}\u0000${limit}:${fetched}:${exactScanMaxRows}:${efSearch}:${maxScanTuples}:${walkCost}`;
  const make = () => build(search.make(), { limit, fetched, exactScanMaxRows, efSearch, maxScanTuples, walkCost });
  const built = key === undefined ? make() : builtFor(key, make);
  const client = (db as unknown as { $client: unknown }).$client;
  type Ranked = Row & { distance: number };
  // Whether a ranking is all the search returns: the estimate chose the exact path, or the index
  // path found `limit` rows; else the index gave up first, and every matching row is ranked exactly.
  const complete = (exact: unknown, rows: readonly unknown[]) => exact === true || rows.length >= limit;
  const searchPool = client instanceof pg.Pool && built.server ? vectorSearchPoolOf(client) : undefined;
  if (searchPool && built.server) {
    const server = built.server;
    return onSearchConnection<Ranked>(searchPool, async (session) => {
      if (key === undefined || !session.warm(server.search.name)) {
        // The first run on this connection: two small statements in one message, planned for
        // this search alone, the vector as text.
        const literal = vectorLiteral(vector);
        const [setup, rows] = await session.message(server.message.join(literal));
        if (complete(setup![0]!.exact, rows!)) return rows as Ranked[];
        return (await session.message(server.exactMessage.join(literal)))[1] as Ranked[];
      }
      const binary = [vectorToBinary(vector)];
      const rows = await session.prepared<Ranked & { [EXACT]: boolean }>(server.search, binary);
      // Nothing matched: one row of nulls still carries the path.
      const found = rows[0]!.distance === null ? [] : rows.map(withoutPath);
      return complete(rows[0]![EXACT], found) ? found : session.prepared<Ranked>(server.exact, binary);
    });
  }
  const binary = vectorToBinary(vector);
  const bind = (s: Statement, rows?: number) => s.params.map((p) => (p === VECTOR ? binary : p === ROWS ? rows : p));
  const run = async (tx: Pick<PGlite, 'query'> | Transaction) => {
    const [setup] = (await tx.query<{ exact: boolean; walk_rows: number }>(built.setup.text, bind(built.setup))).rows;
    const rows = (await tx.query<Ranked>(built.ranked.text, bind(built.ranked, Number(setup!.walk_rows)))).rows;
    if (complete(setup!.exact, rows)) return rows;
    await tx.query(EXACT_SETUP);
    return (await tx.query<Ranked>(built.ranked.text, bind(built.ranked, limit))).rows;
  };
  if (isPglite(client)) return client.transaction(run);
  if (!(client instanceof pg.Pool)) {
    // A drizzle transaction has no client of its own here: searching inside one would read outside it.
    throw new TypeError('filteredVectorSearch takes the database handle (a pg Pool or PGlite), not a transaction');
  }
  // A pool without inlinable values: the same statements with bound parameters, in a transaction.
  const pool = client;
  const conn = await pool.connect();
  try {
    await conn.query('BEGIN');
    const rows = await run({ query: async (text: string, params?: unknown[]) => conn.query(text, params) } as unknown as Pick<PGlite, 'query'>);
    await conn.query('COMMIT');
    conn.release();
    return rows;
  } catch (error) {
    await conn.query('ROLLBACK').catch(() => {});
    conn.release();
    throw error;
  }
}

const isPglite = (client: unknown): client is PGlite => typeof client === 'object' && client !== null && 'transaction' in client && 'exec' in client;

interface Sizes {
  limit: number;
  fetched: number;
  exactScanMaxRows: number;
  efSearch: number;
  maxScanTuples: number;
  walkCost: number;
}

function build(search: FilteredVectorSearch, sizes: Sizes): Built {
  const { limit, fetched, exactScanMaxRows, maxScanTuples } = sizes;
  // A count capped just past exactScanMaxRows tells nothing of the rows past it: only statistics weigh a walk.
  const estimate =
    search.estimate ?? sql`(SELECT count(*) FROM (SELECT 1 FROM ${search.table} WHERE ${search.where} LIMIT ${sql.raw(String(exactScanMaxRows + 1))}) AS m)`;
  const sized = walkSize(search.table, estimate, { ...sizes, counts: search.estimateCounts === true, walkCost: search.estimate ? sizes.walkCost : 0 });
  // Sorting is off on the index path so the planner takes the HNSW scan it was sent for: left to
  // itself it may prefer a GIN lookup of every row with the tag and a sort (62 ms for a 10% tag
  // of 100k rows), priced low because it cannot see that every 512-d vector is TOASTed. Index
  // scans are off on the exact path, which then reads the matching rows by their GIN or btree
  // bitmap and sorts them.
  const setup = dialect.sqlToQuery(sql`SELECT exact, walk_rows,
    set_config('hnsw.ef_search', ef::text, true),
    set_config('hnsw.iterative_scan', 'relaxed_order', true),
    set_config('hnsw.max_scan_tuples', ${sql.raw(`'${maxScanTuples}'`)}, true),
    set_config('enable_sort', CASE WHEN exact THEN 'on' ELSE 'off' END, true),
    set_config('enable_indexscan', CASE WHEN exact THEN 'off' ELSE 'on' END, true)
    FROM ${sized} AS s`);
  const distance = sql`${search.embedding} <=> ${VECTOR}::vector`;
  // Ordered by the output column: the vector is sent and parsed once, and the index still serves
  // the ORDER BY, which names the same expression.
  const ranked = dialect.sqlToQuery(sql`SELECT ${search.columns}, ${distance} AS distance FROM ${search.table}
    WHERE ${search.where} AND ${search.embedding} IS NOT NULL ORDER BY distance LIMIT ${ROWS}`);
  const rankedStatement = { text: ranked.sql, params: ranked.params };
  const setupStatement = { text: setup.sql, params: setup.params };
  // The exact path cannot take the index: its ORDER BY is outside the subquery that filters.
  const filtered = sql`SELECT ${search.columns}, ${distance} AS distance FROM ${search.table}
    WHERE ${search.where} AND ${search.embedding} IS NOT NULL`;
  const exactPath = sql.raw('(SELECT exact FROM e)');
  // The walk's rows are the estimate's (see walkSize); an exact ranking needs only `limit`.
  const walkedTop = sql.raw('(SELECT walk_rows FROM e)');
  const top = sql.raw(String(limit));
  // The HNSW settings are the statement's own (SET LOCAL, its implicit transaction): the scan
  // reads them on its first row, after its one-time filter has read the estimate, which sets them.
  const both = dialect.sqlToQuery(sql`WITH e AS MATERIALIZED (SELECT exact, walk_rows,
      set_config('hnsw.ef_search', ef::text, true) AS ef_search,
      set_config('hnsw.iterative_scan', 'relaxed_order', true) AS iterative,
      set_config('hnsw.max_scan_tuples', ${sql.raw(`'${maxScanTuples}'`)}, true) AS tuples FROM ${sized} AS s)
    SELECT ranked.*, e.exact AS ${sql.identifier(EXACT)} FROM e LEFT JOIN (
      (SELECT * FROM (${filtered} AND NOT ${exactPath} ORDER BY distance LIMIT ${walkedTop}) AS walked)
      UNION ALL
      (SELECT * FROM (${filtered} AND ${exactPath} OFFSET 0) AS exact ORDER BY distance LIMIT ${top})
    ) AS ranked ON true`);
  const exact = dialect.sqlToQuery(sql`SELECT * FROM (${filtered} OFFSET 0) AS exact ORDER BY distance LIMIT ${top}`);
  let server: Built['server'] = null;
  try {
    // One message has no setup row to read before its ranked statement: it fetches `fetched`
    // rows (from a widened list, more than it needs), the caller keeping the best `limit`.
    const message = around(`${inline(setupStatement, SLOT)};\n${inline(rankedStatement, SLOT, fetched)}`);
    const exactMessage = around(`${EXACT_SETUP};\n${inline(rankedStatement, SLOT, limit)}`);
    const id = ++statements;
    if (message && exactMessage) {
      server = {
        search: { name: `memrag_vector_search_${id}`, text: inline({ text: both.sql, params: both.params }, '$1') },
        exact: { name: `memrag_vector_exact_${id}`, text: inline({ text: exact.sql, params: exact.params }, '$1') },
        message,
        exactMessage,
      };
    }
  } catch {
    // A value without a literal form: the statements run with bound parameters instead.
  }
  return { setup: setupStatement, ranked: rankedStatement, server };
}

/**
 * The path the estimate chooses (`exact`), with the index path's candidate list `ef` and the
 * rows it fetches, `walk_rows`. Exact: at most `exactScanMaxRows` rows, or (`walkCost` above 0)
 * fewer rows than cost as much as the walk would pass (see VectorScanOptions' `walkCost`).
 * Unrepaired (`fetched` = `limit`) or over an estimate that only bounds the matches: ef_search and
 * `fetched`. Repaired over a count: the list that holds `fetched` matching rows at the estimate's
 * share of the table's rows (the graph holds them all), if at most WIDEST_LIST times ef_search,
 * and `limit` rows from it; else ef_search and `fetched`. The table's row count is the planner's
 * (`reltuples`, -1 before its first VACUUM or ANALYZE), at least the estimate, and read only past
 * `exactScanMaxRows`.
 * @internal exported for its test
 */
export function walkSize(table: PgTable, estimate: SQL, sizes: Omit<Sizes, 'maxScanTuples'> & { counts: boolean }): SQL {
  const { limit, fetched, efSearch, counts, exactScanMaxRows, walkCost } = sizes;
  const n = (value: number) => sql.raw(String(value));
  // OFFSET 0 keeps each level a subquery of its own: pulled up, every mention of `est` (and of
  // `rows`) would be a copy of its expression, the statistics read once per copy (six reads, 0.2 ms
  // of a 2 ms search over a 10% tag of 100k rows).
  const est = sql`(SELECT (${estimate})::bigint AS est OFFSET 0) AS s0`;
  const widens = fetched > limit && counts;
  const weighs = walkCost > 0;
  if (!widens && !weighs) return sql`(SELECT est <= ${n(exactScanMaxRows)} AS exact, ${n(efSearch)} AS ef, ${n(fetched)} AS walk_rows FROM ${est})`;
  const reltuples = sql`(SELECT reltuples FROM pg_class WHERE oid = ${sql.raw(pg.escapeLiteral(dialect.sqlToQuery(sql`${table}`).sql))}::regclass)`;
  // Null up to exactScanMaxRows, where neither the walk's cost nor its list matters.
  const sized = sql`(SELECT est, CASE WHEN est > ${n(exactScanMaxRows)} THEN greatest(${reltuples}, est)::float8 END AS rows FROM ${est} OFFSET 0) AS s1`;
  const exact = weighs ? sql`est <= ${n(exactScanMaxRows)} OR est::float8 * est <= ${n(walkCost)} * ${n(fetched)} * rows` : sql`est <= ${n(exactScanMaxRows)}`;
  if (!widens) return sql`(SELECT ${exact} AS exact, ${n(efSearch)} AS ef, ${n(fetched)} AS walk_rows FROM ${sized})`;
  const widest = n(Math.min(1000, WIDEST_LIST * efSearch));
  return sql`(SELECT exact,
      CASE WHEN wide <= ${widest} THEN greatest(${n(efSearch)}, wide)::int ELSE ${n(efSearch)} END AS ef,
      CASE WHEN wide <= ${widest} THEN ${n(limit)} ELSE ${n(fetched)} END AS walk_rows
    FROM (SELECT ${exact} AS exact, ceil(${n(fetched)} * rows / est) AS wide FROM ${sized} OFFSET 0) AS s2)`;
}

const around = (text: string) => {
  const parts = text.split(SLOT);
  return parts.length === 2 ? parts : null;
};

// No text literal or SQL holds a NUL character.
const SLOT = '\u0000';

/** The path's column in the server's rows, taken off before they are returned. */
const EXACT = 'memrag_exact';
const withoutPath = <Row>({ [EXACT]: _, ...row }: Row & { [EXACT]?: unknown }) => row as Row;
// Statement names are never reused: a name prepared on some connection always means one text.
let statements = 0;

/** A statement with every parameter written in as a literal; the vector as `literal`, the ranked rows as `rows`. */
function inline(s: Statement, literal: string, rows?: number): string {
  return s.text.replace(/\$(\d+)/g, (_, n: string) => {
    const value = s.params[Number(n) - 1];
    return value === VECTOR ? literal : toLiteral(value === ROWS ? rows : value);
  });
}

function toLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return pg.escapeLiteral(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  throw new TypeError(`cannot inline a ${typeof value} parameter`);
}

/** pgvector's text form; each float4 printed exactly (9 significant digits round-trip). */
function vectorLiteral(vector: readonly number[]): string {
  let out = "'[";
  for (let i = 0; i < vector.length; i++) out += (i ? ',' : '') + Math.fround(vector[i]!).toPrecision(9);
  return `${out}]'`;
}
