import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findMigrationsFolder } from '../../src/db/migrations-folder.js';
import { InitdbFailed, initPgliteDirectory, runInitdbChild } from '../../src/db/pglite-initdb.js';
import { expectEveryMigrationApplied } from '../support/migrated-directory.js';

/** What PGlite's child wrote when its WebAssembly trapped in initdb (electric-sql/pglite#534). */
const WASM_TRAP = 'RuntimeError: memory access out of bounds\n    at wasm://wasm/0222e4a2:wasm-function[1634]:0x1f5c2a\n    at PGlite.initdb';

/** A first try that dies as the crashed child did, leaving a cluster half made; the next tries run `then`. */
function crashingOnce(then: (dataDir: string, migrationsFolder: string) => Promise<void>, stderr = WASM_TRAP) {
  const calls: string[] = [];
  const runChild = async (dataDir: string, migrationsFolder: string) => {
    calls.push(dataDir);
    if (calls.length > 1) return then(dataDir, migrationsFolder);
    mkdirSync(join(dataDir, 'base'), { recursive: true });
    writeFileSync(join(dataDir, 'PG_VERSION'), '17\n');
    throw new InitdbFailed(dataDir, 7, stderr);
  };
  return { runChild, calls };
}

describe('initPgliteDirectory: a new directory made by a child process', () => {
  const root = mkdtempSync(join(tmpdir(), 'memrag-initdb-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("PGlite's initdb crashing in WebAssembly failed a new directory's first open: it is emptied and made again", async () => {
    const dataDir = join(root, 'crashed');
    mkdirSync(dataDir);
    const { runChild, calls } = crashingOnce(runInitdbChild);
    await initPgliteDirectory(dataDir, findMigrationsFolder(), { runChild });
    expect(calls).toHaveLength(2);
    await expectEveryMigrationApplied(dataDir);
  });

  it('tries again on a directory that did not exist yet', async () => {
    const dataDir = join(root, 'absent');
    const { runChild, calls } = crashingOnce(async (dir) => {
      // The second try starts from nothing: the first one's half-made cluster is gone.
      expect(existsSync(join(dir, 'PG_VERSION'))).toBe(false);
    });
    await initPgliteDirectory(dataDir, findMigrationsFolder(), { runChild });
    expect(calls).toHaveLength(2);
  });

  it('leaves a directory that held files as it was, and reports the crash', async () => {
    const dataDir = join(root, 'with-files');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'notes.txt'), 'the operator put this here\n');
    const { runChild, calls } = crashingOnce(async () => {});
    await expect(initPgliteDirectory(dataDir, findMigrationsFolder(), { runChild })).rejects.toThrow(/memory access out of bounds/);
    expect(calls).toHaveLength(1);
    expect(readFileSync(join(dataDir, 'notes.txt'), 'utf8')).toBe('the operator put this here\n');
  });

  it('does not run again a failure that is not a crash: a migration that fails fails the same way twice', async () => {
    const dataDir = join(root, 'bad-schema');
    const { runChild, calls } = crashingOnce(async () => {}, 'error: relation "memories" already exists');
    const failure = await initPgliteDirectory(dataDir, findMigrationsFolder(), { runChild }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InitdbFailed);
    expect((failure as InitdbFailed).crashedInWasm).toBe(false);
    expect(calls).toHaveLength(1);
  });

  it('gives up after the second crash', async () => {
    const dataDir = join(root, 'crashes-twice');
    let calls = 0;
    const runChild = async (dir: string) => {
      calls++;
      throw new InitdbFailed(dir, 7, WASM_TRAP);
    };
    await expect(initPgliteDirectory(dataDir, findMigrationsFolder(), { runChild })).rejects.toThrow(InitdbFailed);
    expect(calls).toBe(2);
  });
});
