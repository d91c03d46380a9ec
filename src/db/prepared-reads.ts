import { createHash } from 'node:crypto';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import type { Db } from './database.js';
import { type PreparedOnConnection, isStatementError, releaseKeeping, runPrepared } from './prepared-statements.js';
import { queryRows } from './query-rows.js';

/**
 * Prepared reads one connection of the main pool keeps. The server holds a statement's parse
 * tree and plan for each (a BM25 search's: a few hundred KB), and a read's text changes only
 * with its filter's shape and page size, so a few dozen cover a process's searches.
 */
export const PREPARED_READS_PER_CONNECTION = 32;

const dialect = new PgDialect();
const connections = new WeakMap<pg.PoolClient, PreparedOnConnection>();

/**
 * Runs `query`, a read run again and again with other values (a BM25 search), as a named
 * statement on the server's main pool, planned once per connection: its plan does not depend on
 * the values (one-time tests choose its branch when it runs), and planning it took as long as
 * running it (1.17 ms of planning beside 1–4 ms of execution for a memory search's BM25 side under
 * `bench:load`'s mix; docs/benchmarks/load.md). Left to itself the server plans a prepared
 * statement again for each run while the generic plan looks costlier than the custom ones, so
 * these connections take generic plans (`plan_cache_mode`, which only named statements read:
 * drizzle's are unnamed). On PGlite, or a handle without a pool, it runs as any statement.
 */
export async function queryPrepared<T = Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  const pool = poolOf(db);
  if (!pool) return queryRows<T>(db, query);
  const { sql: text, params } = dialect.sqlToQuery(query);
  return runPreparedRead<T>(pool, { name: preparedReadName(text), text }, params);
}

/** The server's pool behind `db`; undefined on PGlite or a handle without a pool. */
export function poolOf(db: Db): pg.Pool | undefined {
  const client = (db as unknown as { $client: unknown }).$client;
  return client instanceof pg.Pool ? client : undefined;
}

/** A prepared read's name on the server, from its text: equal texts share a statement. */
export function preparedReadName(text: string): string {
  return `r${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
}

/** Runs `statement`, built already, as `queryPrepared` runs a read: on a connection of `pool`, prepared there on its first run. */
export async function runPreparedRead<T>(pool: pg.Pool, statement: { name: string; text: string }, params: unknown[]): Promise<T[]> {
  const conn = await pool.connect();
  let prepared = connections.get(conn);
  try {
    if (!prepared) {
      await conn.query('SET plan_cache_mode = force_generic_plan');
      prepared = new Set();
      connections.set(conn, prepared);
    }
    const rows = await runPrepared<T>(conn, prepared, statement, params);
    releaseKeeping(conn, prepared, PREPARED_READS_PER_CONNECTION);
    return rows;
  } catch (error) {
    conn.release(!isStatementError(error) || prepared === undefined);
    throw error;
  }
}
