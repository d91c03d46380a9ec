/**
 * One suite, run on each database driver: embedded PGlite and a real PostgreSQL server.
 *
 *   describeOnDrivers('MemoryStore contract', (driver) => {
 *     let database: Database;
 *     beforeAll(async () => { database = await driver.open(); });
 *     afterAll(() => database?.close());
 *     it(...);
 *   });
 *
 * declares "MemoryStore contract (PGlite)" and "MemoryStore contract (PostgreSQL server)". Whether
 * a server is there is decided before the tests are declared (see `realPostgresSkipReason`): without
 * one, the server's suite is a single skipped test that carries the reason, and its hooks never
 * run; with `CI=true` the file fails instead. So a suite's body never has to check whether it got
 * a database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { describe, it } from 'vitest';
import { type Database, type Db, openDatabase } from '../../src/db/database.js';
import { openRealDatabase } from './real-database.js';
import { acquireRealPostgres, realPostgresSkipReason } from './real-postgres.js';

export type DriverName = 'PGlite' | 'PostgreSQL server';

const DRIVER_NAMES: readonly DriverName[] = ['PGlite', 'PostgreSQL server'];

/** A database of a suite's own, given as app configuration: the app migrates it when it opens it. */
export interface ProvisionedDatabase {
  /** For `createTestContext`/`loadConfig`: `DATA_DIR` (PGlite) or `DATABASE_URL` (the server). */
  env: Record<string, string>;
  /** Drops the database (removes PGlite's directory). Call it after the app on it is closed. */
  release(): Promise<void>;
}

export interface ProvisionOptions {
  /**
   * The database as an earlier release left it: only the migrations in `migrationsFolder` applied,
   * then `seed` run, through a client that is closed before the app opens the database. PGlite's
   * then lives in a temporary directory instead of in memory, so that it outlives that client.
   */
  olderRelease?: { migrationsFolder: string; seed(db: Db): Promise<void> };
}

export interface DatabaseDriver {
  readonly name: DriverName;
  /** An empty, migrated database of the suite's own; `close()` drops it. */
  open(): Promise<Database>;
  /** An empty database of the suite's own (see ProvisionOptions), for an app to open. */
  provision(options?: ProvisionOptions): Promise<ProvisionedDatabase>;
}

export interface DescribeOnDriversOptions {
  /** The drivers to run on; all of them by default. */
  drivers?: readonly DriverName[];
}

/**
 * Declares `suite` once per driver, as `${name} (${driver.name})`. `suite` may be async: it runs
 * while the tests are collected, so it can open what it needs to know before declaring them.
 */
export function describeOnDrivers(name: string, suite: (driver: DatabaseDriver) => void | Promise<void>, options: DescribeOnDriversOptions = {}): void {
  for (const driverName of options.drivers ?? DRIVER_NAMES) {
    const driver = DRIVERS[driverName];
    const title = `${name} (${driver.name})`;
    describe(title, async () => {
      const skipReason = await driver.skipReason();
      if (skipReason === undefined) return suite(driver);
      // The suite's own tests are not declared: an async suite would open a database to declare them.
      console.warn(`[${title}] skipped: ${skipReason}`);
      it.skip(`skipped: ${skipReason}`, () => {});
    });
  }
}

interface Driver extends DatabaseDriver {
  /** Why this driver cannot run here; throws with CI=true rather than answer. */
  skipReason(): Promise<string | undefined>;
}

const pglite: Driver = {
  name: 'PGlite',
  skipReason: async () => undefined,
  open: () => openDatabase({}),
  async provision({ olderRelease } = {}) {
    if (!olderRelease) return { env: { DATA_DIR: 'memory://' }, release: async () => {} };
    const dataDir = mkdtempSync(join(tmpdir(), 'memrag-pglite-'));
    const provisioned = { env: { DATA_DIR: dataDir }, release: async () => rmSync(dataDir, { recursive: true, force: true }) };
    await buildOlderRelease(provisioned, olderRelease, async (build) => {
      const client = await PGlite.create({ dataDir, extensions: { vector } });
      try {
        const db = drizzlePglite(client);
        await build(db as unknown as Db, (migrationsFolder) => migratePglite(db, { migrationsFolder }));
      } finally {
        await client.close();
      }
    });
    return provisioned;
  },
};

const server: Driver = {
  name: 'PostgreSQL server',
  skipReason: realPostgresSkipReason,
  async open() {
    const opened = await openRealDatabase();
    // Only reached after skipReason() said there is a server: its going away since is a failure.
    if ('skipReason' in opened) throw new Error(opened.skipReason);
    return opened;
  },
  async provision({ olderRelease } = {}) {
    const acquired = await acquireRealPostgres();
    if ('skipReason' in acquired) throw new Error(acquired.skipReason);
    const provisioned = { env: { DATABASE_URL: acquired.url }, release: () => acquired.release() };
    if (olderRelease) {
      await buildOlderRelease(provisioned, olderRelease, async (build) => {
        const pool = new pg.Pool({ connectionString: acquired.url, max: 2 });
        try {
          const db = drizzlePg(pool);
          await build(db as unknown as Db, (migrationsFolder) => migratePg(db, { migrationsFolder }));
        } finally {
          await pool.end();
        }
      });
    }
    return provisioned;
  },
};

type Build = (db: Db, migrate: (migrationsFolder: string) => Promise<void>) => Promise<void>;

/** Runs the older release's migrations and seed through `connect`'s client; releases the database if that fails. */
async function buildOlderRelease(
  provisioned: ProvisionedDatabase,
  { migrationsFolder, seed }: NonNullable<ProvisionOptions['olderRelease']>,
  connect: (build: Build) => Promise<void>,
): Promise<void> {
  try {
    await connect(async (db, migrate) => {
      await migrate(migrationsFolder);
      await seed(db);
    });
  } catch (error) {
    await provisioned.release().catch(() => undefined);
    throw error;
  }
}

const DRIVERS: Record<DriverName, Driver> = { PGlite: pglite, 'PostgreSQL server': server };
