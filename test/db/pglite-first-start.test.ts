import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pgliteDirectoryToCreate } from '../../src/db/pglite-first-start.js';

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
