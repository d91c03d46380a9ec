import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import type { ExtractTablesWithRelations } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT, PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { dropConnectionsWhoseQueryTimesOut } from './drop-timed-out-connections.js';
import { openInMemoryPglite } from './in-memory-pglite.js';
import { yieldBeforeStatements } from './pglite-fair-turns.js';
import { PgliteThread } from './pglite-thread.js';
import { findMigrationsFolder } from './migrations-folder.js';
import { initPgliteDirectory } from './pglite-initdb.js';
import { reportPoolWaits } from './pool-wait.js';
import { releaseClientsWhoseBeginFails } from './release-on-failed-begin.js';
import * as schema from './schema/index.js';
import { type SqlRunner, type TableStatistics, startTableStatistics } from './table-statistics.js';
import { attachVectorSearchPool } from './vector-search-connections.js';
import { bindPgliteVectorsAsBinary } from './vector-wire-format.js';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/**
 * A transaction of either driver, as `Db.transaction` hands it to its callback. It is a `Db` as
 * well, so it goes wherever one does; a function that is only correct inside a transaction (it
 * takes row locks, or its writes must commit or fail with the caller's) asks for a `Tx` instead.
 */
export type Tx = PgTransaction<PgQueryResultHKT, typeof schema, ExtractTablesWithRelations<typeof schema>>;

export interface Database {
  db: Db;
  driver: 'pglite' | 'pg';
  /** Planner statistics kept up with the data; bulk writers call `afterBulkWrite`. */
  statistics: TableStatistics;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** A PostgreSQL server; when absent, embedded PGlite is used. */
  url?: string;
  /** PGlite's data directory; `memory://` or undefined keeps it in memory. */
  dataDir?: string;
  /** PGlite's buffer cache (`shared_buffers`, e.g. `32MB`), resident in the process; see PGLITE_SHARED_BUFFERS. */
  pgliteSharedBuffers?: string;
  /** Runs PGlite in a worker thread of its own (see pglite-thread.ts); see PGLITE_THREAD. */
  pgliteThread?: boolean;
  /** Connections in the pool, for the server driver. */
  poolSize?: number;
  /**
   * How long a query waits for a connection (a new one to open, or a busy pool to free one)
   * before failing, for the server driver. Without a bound, a server that stopped answering
   * would hold every request until the client gave up.
   */
  connectTimeoutMs?: number;
  /**
   * For the server driver: how long one statement may run. The server cancels it past this
   * (57014, the connection stays usable), and the client gives up on a server that does not even
   * answer that QUERY_TIMEOUT_GRACE_MS later, dropping the connection. Either fails the query as
   * the database being unavailable. Migrations are not bounded. Unset or 0: no bound.
   */
  statementTimeoutMs?: number;
  /**
   * How often the tables are checked, to analyze those that changed as much as autovacuum would
   * wait for (PGlite has no autovacuum; a server's is late). Default 5 s. See table-statistics.ts.
   */
  analyzeIntervalMs?: number;
  /** Called with how long each query or transaction waited for a pooled connection, for the server driver. */
  onPoolWait?: (seconds: number) => void;
}

/** See OpenDatabaseOptions.connectTimeoutMs. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/**
 * How much longer than the statement timeout the client waits for an answer: a live server's
 * cancellation arrives first (and keeps the connection), only a silent one meets the client's.
 */
export const QUERY_TIMEOUT_GRACE_MS = 1_000;

const SEARCH_CONNECTION_IDLE_MS = 60_000;

// Serialises migrations of several processes starting against one server at once.
const MIGRATION_LOCK_ID = 727_274_101;

/** Opens the database, applies pending migrations and returns a Drizzle handle. */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const migrationsFolder = findMigrationsFolder();
  if (options.url) {
    const connectionTimeoutMillis = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    // Migrations on connections of their own, without the statement timeout: building an index may take minutes.
    const migrations = openPool({ connectionString: options.url, max: 2, connectionTimeoutMillis });
    try {
      await migrateUnderLock(migrations, migrationsFolder);
    } finally {
      await migrations.end();
    }
    const statementTimeoutMs = options.statementTimeoutMs || undefined;
    const openQueryPool = (max: number, idleTimeoutMillis?: number) => {
      const opened = openPool({
        connectionString: options.url,
        max,
        ...(idleTimeoutMillis && { idleTimeoutMillis }),
        connectionTimeoutMillis,
        ...(statementTimeoutMs && { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + QUERY_TIMEOUT_GRACE_MS }),
      });
      if (statementTimeoutMs) dropConnectionsWhoseQueryTimesOut(opened);
      if (options.onPoolWait) reportPoolWaits(opened, options.onPoolWait);
      return opened;
    };
    const pool = openQueryPool(options.poolSize ?? 10);
    // Opened as searches need them (a pool connects lazily); kept a minute idle, where the other
    // pool keeps pg's 10 s, because each holds the statements its searches prepared.
    const searchPool = openQueryPool(options.poolSize ?? 10, SEARCH_CONNECTION_IDLE_MS);
    attachVectorSearchPool(pool, searchPool);
    return withStatistics(drizzlePg(pool, { schema }), 'pg', pool, options, () => Promise.all([pool.end(), searchPool.end()]));
  }

  const dataDir = options.dataDir && options.dataDir !== 'memory://' ? resolve(options.dataDir) : undefined;
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  if (options.pgliteThread) return openPgliteThread(dataDir, options, migrationsFolder);
  const migrate = (client: PGlite) => migratePglite(drizzlePglite(client, { schema }), { migrationsFolder });
  const client = dataDir
    ? await openPgliteDirectory(dataDir, migrationsFolder, options.pgliteSharedBuffers ?? PGLITE_SHARED_BUFFERS)
    : await openInMemoryPglite(migrate);
  if (dataDir) await migrate(client);
  yieldBeforeStatements(client);
  const db = drizzlePglite(client, { schema });
  await bindPgliteVectorsAsBinary(client);
  // PGlite has no autovacuum, so nothing would ever gather planner statistics: every table would
  // look empty, and the planner picks nested loops that are quadratic at a few thousand rows.
  await client.exec('ANALYZE');
  return withStatistics(db, 'pglite', client, options, () => client.close());
}

async function openPgliteThread(dataDir: string | undefined, options: OpenDatabaseOptions, migrationsFolder: string): Promise<Database> {
  if (dataDir && !existsSync(join(dataDir, 'PG_VERSION'))) await initPgliteDirectory(dataDir, migrationsFolder);
  const thread = await PgliteThread.open({ ...(dataDir && { dataDir, sharedBuffers: options.pgliteSharedBuffers ?? PGLITE_SHARED_BUFFERS }) });
  try {
    // Drizzle and its migrator call only the part of PGlite's interface the thread offers.
    const client = thread as unknown as PGlite;
    await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder });
    await thread.bindVectorsAsBinary();
    await thread.exec('ANALYZE');
    return withStatistics(drizzlePglite(client, { schema }), 'pglite', thread, options, () => thread.close());
  } catch (error) {
    await thread.close().catch(() => {});
    throw error;
  }
}

/** An open driver as a Database: its planner statistics kept on `runner`, stopped before the driver closes. */
function withStatistics(
  db: unknown,
  driver: Database['driver'],
  runner: SqlRunner,
  options: OpenDatabaseOptions,
  closeDriver: () => Promise<unknown>,
): Database {
  const statistics = startTableStatistics(runner, options.analyzeIntervalMs === undefined ? {} : { intervalMs: options.analyzeIntervalMs });
  return {
    db: db as Db,
    driver,
    statistics,
    close: async () => {
      await statistics.stop();
      await closeDriver();
    },
  };
}

/**
 * PGlite's buffer cache on a data directory. PostgreSQL's default, 128MB, is part of the process's
 * WebAssembly memory, resident from the start (PGlite alone: 147 MB of wasm memory at 128MB, 45 at
 * 32MB) and never given back; the data files stay in the OS page cache beside it, where a miss
 * reads them. A server's PostgreSQL keeps its own default.
 */
export const PGLITE_SHARED_BUFFERS = '32MB';

/** PGlite on a data directory; a new one is created by a child process first (see initPgliteDirectory). */
async function openPgliteDirectory(dataDir: string, migrationsFolder: string, sharedBuffers: string): Promise<PGlite> {
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initPgliteDirectory(dataDir, migrationsFolder);
  return PGlite.create({ dataDir, extensions: { vector }, startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffers}`] });
}

function openPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  // An idle client's error (server restart) must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Nor may a checked-out one's: the pool listens only to idle clients, and a connection that dies
  // inside a transaction emits 'error' with no listener, which throws. Its query fails anyway, and
  // the pool drops the client (no longer queryable) when it is released.
  pool.on('connect', (client) => client.on('error', () => {}));
  releaseClientsWhoseBeginFails(pool);
  return pool;
}

async function migrateUnderLock(pool: pg.Pool, migrationsFolder: string): Promise<void> {
  const lock = await pool.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await migratePg(drizzlePg(pool, { schema }), { migrationsFolder });
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
    lock.release();
  }
}
