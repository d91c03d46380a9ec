import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite/vector';
import { expect } from 'vitest';
import { findMigrationsFolder } from '../../src/db/migrations-folder.js';

/** Opens the PGlite directory `dataDir` and expects every migration of the journal applied there. */
export async function expectEveryMigrationApplied(dataDir: string, also?: (db: PGlite) => Promise<void>): Promise<void> {
  const journal = JSON.parse(readFileSync(join(findMigrationsFolder(), 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
  const db = await PGlite.create({ dataDir, extensions: { vector } });
  try {
    const applied = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
    expect(applied.rows[0]!.n).toBe(journal.entries.length);
    await also?.(db);
  } finally {
    await db.close();
  }
}
