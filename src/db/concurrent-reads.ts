import pg from 'pg';
import type { Db } from './database.js';

/**
 * Whether independent reads on this handle may run at once: a server pool gives each its own
 * connection. PGlite has one connection, and a drizzle transaction is one connection too, so
 * their reads queue behind each other and gain nothing from being started together.
 */
export function readsRunConcurrently(db: Db): boolean {
  return (db as unknown as { $client?: unknown }).$client instanceof pg.Pool;
}
