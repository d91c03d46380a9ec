import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findMigrationsFolder } from './migrations-folder.js';
import { initPgliteDirectory } from './pglite-initdb.js';

/**
 * The embedded database's directory when it holds no database yet: a first start creates one
 * there (see createPgliteDirectory), which later starts skip. Undefined beside a database server,
 * for an in-memory store, and once the directory holds a database.
 */
export function pgliteDirectoryToCreate(config: { DATABASE_URL?: string | undefined; DATA_DIR: string }): string | undefined {
  if (config.DATABASE_URL || config.DATA_DIR === 'memory://') return undefined;
  const dataDir = resolve(config.DATA_DIR);
  return existsSync(join(dataDir, 'PG_VERSION')) ? undefined : dataDir;
}

/**
 * Creates the database in `dataDir` (PGlite's initdb and the schema's migrations, in a child
 * process): most of what a first start costs over a restart. Started before the server loads its
 * modules, it runs on another core meanwhile; opening the directory then finds it made and migrated.
 */
export async function createPgliteDirectory(dataDir: string): Promise<void> {
  mkdirSync(dataDir, { recursive: true });
  await initPgliteDirectory(dataDir, findMigrationsFolder());
}
