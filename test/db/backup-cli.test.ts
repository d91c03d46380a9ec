import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BackupTarget, runBackupCli, runRestoreCli } from '../../src/db/backup-cli.js';

const root = mkdtempSync(join(tmpdir(), 'memrag-backup-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function run(command: typeof runBackupCli, argv: string[], target: BackupTarget = { dataDir: join(root, 'data') }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await command(argv, target, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err: err.join('\n') };
}

describe('npm run backup / restore arguments', () => {
  it('answers a missing, extra or unknown argument with the usage and exit code 2', async () => {
    for (const [command, usage] of [
      [runBackupCli, 'Usage: npm run backup -- <file>'],
      [runRestoreCli, 'Usage: npm run restore -- [--force] <file>'],
    ] as const) {
      for (const argv of [[], ['a.tar.gz', 'b.tar.gz'], ['--nope', 'a.tar.gz'], [''], ['--force']]) {
        const result = await run(command, argv);
        expect(result.code, argv.join(' ')).toBe(2);
        expect(result.err).toContain(usage);
      }
      const help = await run(command, ['--help']);
      expect(help.code).toBe(0);
      expect(help.err).toContain(usage);
    }
    // --force belongs to restore only: a backup never overwrites.
    expect((await run(runBackupCli, ['--force', 'a.tar.gz'])).code).toBe(2);
    expect(existsSync(join(root, 'data'))).toBe(false);
  });

  it('refuses a PostgreSQL server, naming pg_dump and pg_restore', async () => {
    const target = { databaseUrl: 'postgres://memrag@127.0.0.1:5432/memrag', dataDir: join(root, 'data') };
    const backup = await run(runBackupCli, ['a.tar.gz'], target);
    expect(backup).toMatchObject({ code: 1, out: [] });
    expect(backup.err).toMatch(/DATABASE_URL is set: .*Use pg_dump -Fc for a PostgreSQL server/);
    const restore = await run(runRestoreCli, ['a.tar.gz'], target);
    expect(restore.code).toBe(1);
    expect(restore.err).toMatch(/DATABASE_URL is set: .*Use pg_restore for a PostgreSQL server/);
  });

  it('refuses an in-memory store, and a DATA_DIR that holds none', async () => {
    expect((await run(runBackupCli, ['a.tar.gz'], { dataDir: 'memory://' })).err).toMatch(/memory:\/\/: an in-memory store/);
    const empty = await run(runBackupCli, [join(root, 'a.tar.gz')], { dataDir: join(root, 'nothing-here') });
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(/holds no embedded store \(no PG_VERSION\)/);
    expect((await run(runRestoreCli, [join(root, 'missing.tar.gz')])).err).toMatch(/missing\.tar\.gz does not exist/);
  });
});

describe('src/cli/backup.ts and src/cli/restore.ts', () => {
  const spawnCli = (script: string, args: string[], env: Record<string, string> = {}) => {
    const { DATABASE_URL: _url, ...rest } = process.env;
    return spawnSync(process.execPath, ['--import', 'tsx', script, ...args], {
      env: { ...rest, DATA_DIR: join(root, 'data'), ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
  };

  it('exit 2 with the usage without a file, 1 with DATABASE_URL set', () => {
    const backup = spawnCli('src/cli/backup.ts', []);
    expect(backup.status, backup.stderr).toBe(2);
    expect(backup.stderr).toContain('a file is required');
    expect(backup.stderr).toContain('Usage: npm run backup -- <file>');
    const restore = spawnCli('src/cli/restore.ts', ['x.tar.gz'], { DATABASE_URL: 'postgres://memrag@127.0.0.1:5432/memrag' });
    expect(restore.status, restore.stderr).toBe(1);
    expect(restore.stderr).toContain('pg_restore');
  }, 60_000);
});
