import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgliteDirectory, pgliteDirectoryToCreate } from '../../src/db/pglite-first-start.js';
import { expectEveryMigrationApplied } from '../support/migrated-directory.js';

describe('pgliteDirectoryToCreate: whether a start is the first on its DATA_DIR', () => {
  const root = mkdtempSync(join(tmpdir(), 'memrag-first-start-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('names a directory that does not exist yet, or holds no database, as one to create', () => {
    expect(pgliteDirectoryToCreate({ DATA_DIR: join(root, 'absent') })).toBe(join(root, 'absent'));
    expect(pgliteDirectoryToCreate({ DATA_DIR: root })).toBe(root);
  });

  it('names none once the directory holds a database, beside a database server, or in memory', () => {
    const existing = mkdtempSync(join(root, 'cluster-'));
    writeFileSync(join(existing, 'PG_VERSION'), '17\n');
    expect(pgliteDirectoryToCreate({ DATA_DIR: existing })).toBeUndefined();
    expect(pgliteDirectoryToCreate({ DATA_DIR: join(root, 'absent'), DATABASE_URL: 'postgres://db/memrag' })).toBeUndefined();
    expect(pgliteDirectoryToCreate({ DATA_DIR: 'memory://' })).toBeUndefined();
  });
});

describe('createPgliteDirectory: the first start creates the database in a child process', () => {
  const root = mkdtempSync(join(tmpdir(), 'memrag-first-start-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  // Migrating in the server's process left ~30 MB more resident for its life than a restart on the
  // same directory; the server's own open then finds nothing pending.
  it('leaves every migration applied, so the server does not run them in its own process', async () => {
    const dataDir = join(root, 'data');
    await createPgliteDirectory(dataDir);
    expect(pgliteDirectoryToCreate({ DATA_DIR: dataDir })).toBeUndefined();
    await expectEveryMigrationApplied(dataDir, async (db) => {
      const tables = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'memories'`);
      expect(tables.rows[0]!.n).toBe(1);
    });
  });
});
