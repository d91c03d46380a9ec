import { sql } from 'drizzle-orm';
import type { Db } from '../../../src/db/database.js';
import { queryRows } from '../../../src/db/query-rows.js';

/** Per table: its row count and the sum of its rows' xmin, which any insert, update or delete changes. */
export type TableFingerprint = Record<string, string>;

/**
 * Reads every table of the public schema, whichever exist when called (tables another change adds
 * are covered without editing this). xmin rather than a hash of the rows: it changes on every
 * write (an UPDATE writes a new row version) and reads no TOASTed content, so it stays cheap while
 * accepted requests grow the tables.
 */
export async function createTableFingerprinter(db: Db): Promise<() => Promise<TableFingerprint>> {
  const names = (
    await queryRows<{ table_name: string }>(
      db,
      sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    )
  ).map((r) => r.table_name);
  if (names.length === 0) throw new Error('no tables in the public schema: were the migrations applied?');
  const query = sql.raw(
    names
      .map((name) => `SELECT '${name}' AS t, count(*) || ':' || coalesce(sum(xmin::text::bigint), 0) AS f FROM "${name.replace(/"/g, '""')}"`)
      .join(' UNION ALL '),
  );
  return async () => Object.fromEntries((await queryRows<{ t: string; f: string }>(db, query)).map((r) => [r.t, r.f]));
}
