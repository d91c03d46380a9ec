import { existsSync, openAsBlob, readdirSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';

/** A backup or restore refused or failed for a reason the operator can act on; its message says which. */
export class BackupError extends Error {
  override name = 'BackupError';
}

/**
 * PGlite takes no lock on its directory, but its Postgres writes postmaster.pid while an instance
 * has it open and removes it on close. Present, it means a process has the directory open, or one
 * stopped without closing it (killed, crashed): the file cannot tell which, so both are refused.
 */
export function pgliteDirectoryInUse(dataDir: string): boolean {
  return existsSync(join(dataDir, 'postmaster.pid'));
}

const STOPPED_FIRST =
  'Stop the memrag server (and any `npm run worker`, `keys` or `reembed`) using it first. If none is running, the last one did not shut down cleanly: start and stop the server once, which recovers the directory, then try again.';

/**
 * Writes a snapshot of the PGlite data directory `dataDir` to `file`, as PGlite's own dump (a
 * gzipped tarball of the directory, what `restorePgliteDirectory` and PGlite's `loadDataDir` read).
 * The directory must be closed: a second instance on a directory another process has open would
 * replay its WAL under it and corrupt it, so an open one is refused rather than copied.
 */
export async function backupPgliteDirectory(dataDir: string, file: string): Promise<{ bytes: number }> {
  const dir = resolve(dataDir);
  if (!existsSync(join(dir, 'PG_VERSION'))) throw new BackupError(`${dir} holds no embedded store (no PG_VERSION): check DATA_DIR.`);
  if (pgliteDirectoryInUse(dir)) throw new BackupError(`${dir} is in use (it has a postmaster.pid). ${STOPPED_FIRST}`);
  if (existsSync(file)) throw new BackupError(`${file} exists: name a new file (a backup never overwrites one).`);

  const client = await PGlite.create({ dataDir: dir, extensions: { vector } });
  let dump: Blob;
  try {
    // Everything in the data files, so that the restored copy opens without replaying WAL.
    await client.exec('CHECKPOINT');
    dump = await client.dumpDataDir('gzip');
  } finally {
    await client.close();
  }
  // Written beside the target and renamed: an interrupted backup leaves no file that looks whole.
  const partial = `${file}.partial-${process.pid}`;
  try {
    const handle = await open(partial, 'wx');
    try {
      await handle.writeFile(new Uint8Array(await dump.arrayBuffer()));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(partial, file);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
  return { bytes: dump.size };
}

export interface RestoreOptions {
  /** Replace what a non-empty `dataDir` holds (never a directory in use). */
  force?: boolean;
}

/**
 * Loads a backup written by `backupPgliteDirectory` into `dataDir`, which must be empty or absent
 * unless `force`. The backup is loaded and opened in a staging directory inside `dataDir` first, so
 * a file that is not a backup leaves `dataDir` as it was; the staging directory is inside rather
 * than beside it so that the final moves stay on one filesystem when `dataDir` is a mount point.
 */
export async function restorePgliteDirectory(file: string, dataDir: string, options: RestoreOptions = {}): Promise<void> {
  const dir = resolve(dataDir);
  if (!existsSync(file)) throw new BackupError(`${file} does not exist.`);
  const existing = existsSync(dir) ? readdirSync(dir) : [];
  if (existing.length > 0) {
    if (pgliteDirectoryInUse(dir)) throw new BackupError(`${dir} is in use (it has a postmaster.pid). ${STOPPED_FIRST}`);
    if (!options.force) throw new BackupError(`${dir} is not empty: restore into an empty DATA_DIR, or pass --force to replace what it holds.`);
  }

  const created = !existsSync(dir);
  const staging = join(dir, `.restoring-${process.pid}`);
  await mkdir(staging, { recursive: true });
  let restored = false;
  try {
    let client: PGlite;
    try {
      client = await PGlite.create({ dataDir: staging, loadDataDir: await openAsBlob(file), extensions: { vector } });
    } catch (err) {
      throw new BackupError(`${file} could not be loaded as a PGlite backup: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Opening replays the WAL the dump holds; closing checkpoints and removes postmaster.pid.
    await client.close();
    for (const entry of existing) await rm(join(dir, entry), { recursive: true, force: true });
    for (const entry of readdirSync(staging)) await rename(join(staging, entry), join(dir, entry));
    restored = true;
  } finally {
    await rm(staging, { recursive: true, force: true });
    // An empty DATA_DIR left behind would start the server on a new, empty store.
    if (!restored && created) await rm(dir, { recursive: true, force: true });
  }
}
