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

/** Prepared search statements one connection keeps; the least recently used one goes first. */
export const PREPARED_PER_CONNECTION = 64;

/** Per connection: the names of the statements prepared on it, least recently used first. */
const sessions = new WeakMap<pg.PoolClient, Set<string>>();

export interface SearchStatement {
  /** Unset: parsed and planned for this search alone. */
  name?: string;
  text: string;
}

/**
 * Runs `run` on one search connection: its `query` runs a statement with the vector as its one
 * parameter. A connection whose statement failed is closed, not reused: its session may be half
 * set, or its statements not what this process thinks.
 */
export async function onSearchConnection<Row>(
  pool: pg.Pool,
  vector: Buffer,
  run: (query: (statement: SearchStatement) => Promise<Row[]>) => Promise<Row[]>,
): Promise<Row[]> {
  const conn = await pool.connect();
  try {
    let prepared = sessions.get(conn);
    if (!prepared) {
      await conn.query('SET enable_sort = off; SET jit = off');
      prepared = new Set();
      sessions.set(conn, prepared);
    }
    const rows = await run(async (statement) => {
      if (statement.name === undefined) return (await conn.query({ text: statement.text, values: [vector] })).rows as Row[];
      if (prepared.has(statement.name)) prepared.delete(statement.name);
      else if (prepared.size >= PREPARED_PER_CONNECTION) await deallocate(conn, prepared);
      const result = await conn.query({ name: statement.name, text: statement.text, values: [vector] });
      prepared.add(statement.name);
      return result.rows as Row[];
    });
    conn.release();
    return rows;
  } catch (error) {
    conn.release(true);
    throw error;
  }
}

async function deallocate(conn: pg.PoolClient, prepared: Set<string>): Promise<void> {
  const oldest = prepared.values().next().value!;
  prepared.delete(oldest);
  await conn.query(`DEALLOCATE ${pg.escapeIdentifier(oldest)}`);
  // node-postgres remembers what it prepared, to skip the parse next time; it must forget this one.
  delete (conn as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements[oldest];
}
