import type { SQL } from 'drizzle-orm';
import type { Db } from './database.js';

/** Runs raw SQL on either driver; both answer with a `{ rows }` result. */
export async function queryRows<T = Record<string, unknown>>(db: Db, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown as { rows: T[] };
  return result.rows;
}
