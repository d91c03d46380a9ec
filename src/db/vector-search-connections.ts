import pg from 'pg';

/**
 * The server's connections for ranked vector scans, apart from the pool every other statement
 * uses. Their sessions keep what a vector search needs and would harm anything else: sorting
 * priced out (so the planner walks the HNSW index it was written for; the exact path sorts
 * because it can do nothing else), no JIT (a disabled sort's price would compile every statement,
 * 60–170 ms), and each search as a prepared statement (no parsing or planning per search, the
 * vector bound in binary). These are planner settings, so they must be in place before a
 * statement is planned: set on the connection, not by the statement.
 */
const searchPools = new WeakMap<pg.Pool, pg.Pool>();

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

/** Per connection: the names of the statements prepared on it, least recently used first. */
const sessions = new WeakMap<pg.PoolClient, Set<string>>();

export interface SearchStatement {
  /** Unset: parsed and planned for this search alone. */
  name?: string;
  text: string;
}

/**
 * Runs `run` on one search connection: its `query` runs a statement with the vector as its one
 * parameter. The statements past PREPARED_PER_CONNECTION are let go after the rows are returned,
 * before the connection goes back to the pool. A statement the server refused (a timeout, a bad
 * value) leaves the connection as it was; any other failure closes it: its session may be half
 * set, or its statements not what this process thinks.
 */
export async function onSearchConnection<Row>(
  pool: pg.Pool,
  vector: Buffer,
  run: (query: (statement: SearchStatement) => Promise<Row[]>) => Promise<Row[]>,
): Promise<Row[]> {
  const conn = await pool.connect();
  let prepared = sessions.get(conn);
  try {
    if (!prepared) {
      await conn.query('SET enable_sort = off; SET jit = off');
      prepared = new Set();
      sessions.set(conn, prepared);
    }
    const names = prepared;
    const rows = await run(async (statement) => {
      if (statement.name === undefined) return (await conn.query({ text: statement.text, values: [vector] })).rows as Row[];
      names.delete(statement.name);
      try {
        return (await conn.query({ name: statement.name, text: statement.text, values: [vector] })).rows as Row[];
      } finally {
        // Prepared once the server parsed it, whether or not it then ran.
        if (parsedStatements(conn)[statement.name] !== undefined) names.add(statement.name);
      }
    });
    if (names.size <= PREPARED_PER_CONNECTION) conn.release();
    else
      void deallocateOldest(conn, names).then(
        () => conn.release(),
        () => conn.release(true),
      );
    return rows;
  } catch (error) {
    conn.release(!isStatementError(error) || prepared === undefined);
    throw error;
  }
}

/** A statement's own failure, which the server reports with a code and survives; not a lost or broken connection (class 08). */
const isStatementError = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08');
};

const parsedStatements = (conn: pg.PoolClient) => (conn as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements;

async function deallocateOldest(conn: pg.PoolClient, prepared: Set<string>): Promise<void> {
  while (prepared.size > PREPARED_PER_CONNECTION) {
    const oldest = prepared.values().next().value!;
    prepared.delete(oldest);
    await conn.query(`DEALLOCATE ${pg.escapeIdentifier(oldest)}`);
    // node-postgres remembers what it prepared, to skip the parse next time; it must forget this one.
    delete parsedStatements(conn)[oldest];
  }
}
