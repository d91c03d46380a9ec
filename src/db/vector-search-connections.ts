import type pg from 'pg';
import { type PreparedOnConnection, isStatementError, releaseKeeping, runPrepared } from './prepared-statements.js';

/**
 * The server's connections for ranked vector scans, apart from the pool every other statement
 * uses. Their sessions keep what a vector search needs and would harm anything else: sorting
 * priced out (so the planner walks the HNSW index it was written for; the exact path sorts
 * because it can do nothing else), no JIT (a disabled sort's price would compile every statement,
 * 60–170 ms), and the searches they run again as prepared statements (no parsing or planning
 * per search, the vector bound in binary). These are planner settings, so they must be in place
 * before a statement is planned: set on the connection, not by the statement. A prepared search
 * has every value written in but the vector, which no cost depends on, so its generic plan is the
 * plan its values would get: it is made on its first run and kept, where the server would plan
 * each of a statement's first five runs for their values.
 */
const searchPools = new WeakMap<pg.Pool, pg.Pool>();

/** What a search connection's session is set to before its first statement (see above). */
export const SEARCH_SESSION_SETTINGS = 'SET enable_sort = off; SET jit = off; SET plan_cache_mode = force_generic_plan';

/** Gives `main` (the pool drizzle queries through) its vector search connections. */
export function attachVectorSearchPool(main: pg.Pool, search: pg.Pool): void {
  searchPools.set(main, search);
}

export function vectorSearchPoolOf(main: pg.Pool): pg.Pool | undefined {
  return searchPools.get(main);
}

/**
 * Prepared search statements one connection keeps; the least recently used one goes first. The
 * server holds about 185 KB for each (its parsed query and cached plan, a memory search's statement
 * at PostgreSQL 15), so a connection holds at most about 6 MB of them.
 */
export const PREPARED_PER_CONNECTION = 32;

/**
 * Names a connection saw run but did not prepare, at most this many: a search is prepared on its
 * second run on a connection, not its first. Preparing costs a parse and a plan of a statement
 * with both paths in it, twice what the two statements of a message cost; a statement seen once
 * (one user's filter among hundreds) would only push a hot one out.
 */
export const SEEN_PER_CONNECTION = 128;

interface Session {
  /** Prepared on this connection, least recently used first. */
  prepared: PreparedOnConnection;
  /** Run here once as a message, least recently seen first. */
  seen: Set<string>;
}

const sessions = new WeakMap<pg.PoolClient, Session>();

export interface SearchSession {
  /** Whether the statement `name` is prepared here, or was seen here lately (and is prepared by running it now). */
  warm(name: string): boolean;
  /** Runs a prepared statement (prepared on first use) with `values`, a Buffer bound in binary. */
  prepared<Row>(statement: { name: string; text: string }, values: unknown[]): Promise<Row[]>;
  /** Sends statements in one message of the simple protocol, values written in: each one's rows. */
  message(text: string): Promise<Record<string, unknown>[][]>;
}

/**
 * Runs `run` on one search connection. The statements past PREPARED_PER_CONNECTION are let go
 * after the rows are returned, before the connection goes back to the pool. A statement the server
 * refused (a timeout, a bad value) leaves the connection as it was; any other failure closes it:
 * its session may be half set, or its statements not what this process thinks.
 */
export async function onSearchConnection<Row>(pool: pg.Pool, run: (session: SearchSession) => Promise<Row[]>): Promise<Row[]> {
  const conn = await pool.connect();
  let session = sessions.get(conn);
  try {
    if (!session) {
      await conn.query(SEARCH_SESSION_SETTINGS);
      session = { prepared: new Set(), seen: new Set() };
      sessions.set(conn, session);
    }
    const { prepared, seen } = session;
    const rows = await run({
      warm(name) {
        if (prepared.has(name) || seen.delete(name)) return true;
        seen.add(name);
        if (seen.size > SEEN_PER_CONNECTION) seen.delete(seen.values().next().value!);
        return false;
      },
      prepared: (statement, values) => runPrepared(conn, prepared, statement, values),
      async message(text) {
        const results = (await conn.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
        return (Array.isArray(results) ? results : [results]).map((r) => r.rows);
      },
    });
    releaseKeeping(conn, prepared, PREPARED_PER_CONNECTION);
    return rows;
  } catch (error) {
    conn.release(!isStatementError(error) || session === undefined);
    throw error;
  }
}
