/**
 * A real PostgreSQL server (with pgvector) for integration suites.
 *
 * Resolution order:
 *  1. `TEST_DATABASE_URL` is set: create a fresh, uniquely named database on that server
 *     (`CREATE DATABASE memrag_t_<random>` + `CREATE EXTENSION vector`); `release()` drops it.
 *  2. A Docker engine answers: start `pgvector/pgvector:pg17` with testcontainers; `release()` stops it.
 *  3. Otherwise: `{ skipReason }`. With `CI=true` this throws instead: in CI the real-server
 *     suites must run, never skip silently.
 *
 * Suites reach it through describeOnDrivers (database-drivers.ts), which skips or fails for them.
 * Direct use:
 *   const server = await acquireRealPostgres();
 *   if ('skipReason' in server) { ...skip... } else { use server.url; await server.release(); }
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface RealPostgres {
  /** postgres:// URL of a database that is private to the caller and has the `vector` extension. */
  url: string;
  /** Drops the database (or stops the container). Safe to call more than once. */
  release(): Promise<void>;
}

export type RealPostgresResult = RealPostgres | { skipReason: string };

export const PGVECTOR_IMAGE = 'pgvector/pgvector:pg17';
/** How long we wait for a Docker engine to answer before deciding there is none. */
const DOCKER_PROBE_TIMEOUT_MS = 5_000;

export async function acquireRealPostgres(): Promise<RealPostgresResult> {
  const serverUrl = process.env.TEST_DATABASE_URL?.trim();
  // An explicitly configured server that does not work is an error, never a reason to skip.
  if (serverUrl) return createDatabaseOn(serverUrl);
  const skipReason = await realPostgresSkipReason();
  if (skipReason !== undefined) return { skipReason };
  return startContainer();
}

/**
 * Why `acquireRealPostgres` would skip, or `undefined` when it would give a server (steps 1 and 2
 * above), without creating anything: lets a suite decide whether to run before it declares its tests.
 * With `CI=true` it throws instead of giving a reason.
 */
export async function realPostgresSkipReason(): Promise<string | undefined> {
  // `npm run test:quick` asks for PGlite alone, whatever server or Docker engine there is.
  if (process.env.TEST_PGLITE_ONLY === '1') return 'TEST_PGLITE_ONLY=1 (npm run test:quick): PGlite only';
  if (process.env.TEST_DATABASE_URL?.trim()) return undefined;
  const docker = await probeDockerOnce();
  if (docker.ok) return undefined;
  const skipReason =
    `no real PostgreSQL server: TEST_DATABASE_URL is not set and no Docker engine answered (${docker.reason}). ` +
    'Set TEST_DATABASE_URL=postgres://user@host:5432/db (a server with pgvector >= 0.8; see scripts/setup-postgres.sh) ' +
    'or start Docker to run these tests.';
  if (process.env.CI === 'true') {
    throw new Error(`CI=true but the real-PostgreSQL tests would be skipped: ${skipReason}`);
  }
  return skipReason;
}

// ---------------------------------------------------------------------------
// 1. A fresh database on an existing server
// ---------------------------------------------------------------------------

async function createDatabaseOn(serverUrl: string): Promise<RealPostgres> {
  const name = `memrag_t_${randomBytes(6).toString('hex')}`;
  const url = withDatabase(serverUrl, name);

  await withClient(serverUrl, (admin) => admin.query(`CREATE DATABASE ${quoteIdent(name)}`)).catch((error: unknown) => {
    throw new Error(`TEST_DATABASE_URL: cannot create database ${name} on ${redact(serverUrl)}: ${message(error)}`, {
      cause: error,
    });
  });

  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    await withClient(serverUrl, (admin) => dropDatabase(admin, name));
  };

  try {
    await withClient(url, (client) => client.query('CREATE EXTENSION IF NOT EXISTS vector'));
  } catch (error) {
    await release().catch(() => undefined);
    throw new Error(
      `TEST_DATABASE_URL: CREATE EXTENSION vector failed on ${redact(serverUrl)} (is pgvector installed? ` +
        `run scripts/setup-postgres.sh): ${message(error)}`,
      { cause: error },
    );
  }
  return { url, release };
}

async function dropDatabase(admin: pg.Client, name: string): Promise<void> {
  try {
    // PostgreSQL >= 13: terminates remaining connections itself.
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  } catch (error) {
    if ((error as { code?: string }).code !== '42601') throw error; // not a syntax error: real failure
    // Older servers: terminate other backends, then drop.
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)}`);
  }
}

// ---------------------------------------------------------------------------
// 2. A throwaway container
// ---------------------------------------------------------------------------

// Asked once per test file: the answer is needed when the suites are declared and again when they open databases.
let dockerProbe: Promise<{ ok: true } | { ok: false; reason: string }> | undefined;
function probeDockerOnce(): Promise<{ ok: true } | { ok: false; reason: string }> {
  dockerProbe ??= probeDocker();
  return dockerProbe;
}

async function probeDocker(): Promise<{ ok: true } | { ok: false; reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${DOCKER_PROBE_TIMEOUT_MS} ms`)), DOCKER_PROBE_TIMEOUT_MS);
    timer.unref();
  });
  try {
    // Imported lazily: testcontainers (dockerode, ssh2, ...) is only needed when there is no TEST_DATABASE_URL.
    const { getContainerRuntimeClient } = await import('testcontainers');
    await Promise.race([getContainerRuntimeClient(), timeout]);
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: message(error) };
  } finally {
    clearTimeout(timer);
  }
}

async function startContainer(): Promise<RealPostgres> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer(PGVECTOR_IMAGE).withDatabase('memrag').start();
  const url = container.getConnectionUri();
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    await container.stop();
  };
  try {
    await withClient(url, (client) => client.query('CREATE EXTENSION IF NOT EXISTS vector'));
  } catch (error) {
    await release().catch(() => undefined);
    throw error;
  }
  return { url, release };
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The same server URL (credentials, host, query parameters kept) pointing at another database. */
function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function redact(serverUrl: string): string {
  try {
    const url = new URL(serverUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '<unparseable URL>';
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
