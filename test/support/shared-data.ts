import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The team's data sets live beside the repository (`../shared`), not in it: a fresh clone has none.
 * `MEMRAG_SHARED_DIR` points elsewhere (an empty folder shows what a clone without them does).
 */
const sharedDir = path.resolve(process.env.MEMRAG_SHARED_DIR ?? path.join(import.meta.dirname, '../../../shared'));

export interface SharedDataset {
  /** Absolute path of the data set's folder. */
  dir: string;
  /** False when the folder or one of the files a suite reads is absent. */
  present: boolean;
  /** Why a test that needs it is skipped: the note for `context.skip`. */
  skipReason: string;
}

/** `name` under shared/datasets, present when it holds every file in `files`. */
export function sharedDataset(name: string, files: string[] = []): SharedDataset {
  const dir = path.join(sharedDir, 'datasets', name);
  const present = existsSync(dir) && files.every((file) => existsSync(path.join(dir, file)));
  const needed = files.length > 0 ? files.map((file) => path.join(dir, file)).join(', ') : dir;
  return { dir, present, skipReason: `needs ${needed}: the shared data sets beside the repository, absent from a fresh clone (MEMRAG_SHARED_DIR)` };
}
