import { parseArgs } from 'node:util';
import { BackupError, backupPgliteDirectory, restorePgliteDirectory } from './pglite-backup.js';

export const BACKUP_USAGE = `Usage: npm run backup -- <file>
  Writes a snapshot of the embedded store in DATA_DIR to <file> (a new file; a gzipped tarball).
  The server must be stopped. For a PostgreSQL server (DATABASE_URL), use pg_dump -Fc.`;

export const RESTORE_USAGE = `Usage: npm run restore -- [--force] <file>
  Loads a backup written by \`npm run backup\` into DATA_DIR, which must be empty or absent.
  --force   replace what a non-empty DATA_DIR holds (never while a server has it open)
  For a PostgreSQL server (DATABASE_URL), use pg_restore.`;

/** Where the store is, from the configuration. */
export interface BackupTarget {
  databaseUrl?: string | undefined;
  dataDir: string;
}

export interface BackupCliIo {
  out(line: string): void;
  err(line: string): void;
}

/** `npm run backup`; returns the exit code (1: refused or failed, 2: usage). */
export async function runBackupCli(argv: readonly string[], target: BackupTarget, io: BackupCliIo): Promise<number> {
  const args = parse(argv, BACKUP_USAGE, io, false);
  if (typeof args === 'number') return args;
  const refused = refuseServerOrMemory(target, 'pg_dump -Fc', io);
  if (refused !== undefined) return refused;
  return report(io, async () => {
    const { bytes } = await backupPgliteDirectory(target.dataDir, args.file);
    io.out(`Backed up ${target.dataDir} to ${args.file} (${bytes} bytes).`);
  });
}

/** `npm run restore`; returns the exit code (1: refused or failed, 2: usage). */
export async function runRestoreCli(argv: readonly string[], target: BackupTarget, io: BackupCliIo): Promise<number> {
  const args = parse(argv, RESTORE_USAGE, io, true);
  if (typeof args === 'number') return args;
  const refused = refuseServerOrMemory(target, 'pg_restore', io);
  if (refused !== undefined) return refused;
  return report(io, async () => {
    await restorePgliteDirectory(args.file, target.dataDir, { force: args.force });
    io.out(`Restored ${args.file} into ${target.dataDir}.`);
  });
}

function parse(argv: readonly string[], usage: string, io: BackupCliIo, allowForce: boolean): { file: string; force: boolean } | number {
  const fail = (reason?: string) => {
    if (reason) io.err(reason);
    io.err(usage);
    return reason ? 2 : 0;
  };
  // biome-ignore lint/suspicious/noImplicitAnyLet: typed by TypeScript's flow analysis from parseArgs below.
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { help: { type: 'boolean', short: 'h' }, ...(allowForce && { force: { type: 'boolean' as const } }) },
    });
  } catch (err) {
    return fail((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return fail();
  if (positionals.length === 0) return fail('a file is required');
  if (positionals.length > 1) return fail(`one file only (got ${positionals.join(' ')})`);
  const file = positionals[0]!;
  if (file.trim() === '') return fail('the file name is empty');
  return { file, force: (values as { force?: boolean }).force === true };
}

function refuseServerOrMemory(target: BackupTarget, tool: string, io: BackupCliIo): number | undefined {
  if (target.databaseUrl) {
    io.err(
      `DATABASE_URL is set: this command works on the embedded store (DATA_DIR) only. Use ${tool} for a PostgreSQL server (docs/operations.md, "Backups").`,
    );
    return 1;
  }
  if (target.dataDir === 'memory://') {
    io.err('DATA_DIR is memory://: an in-memory store has nothing on disk to back up or restore.');
    return 1;
  }
  return undefined;
}

async function report(io: BackupCliIo, work: () => Promise<void>): Promise<number> {
  try {
    await work();
    return 0;
  } catch (err) {
    if (!(err instanceof BackupError)) throw err;
    io.err(err.message);
    return 1;
  }
}
