import type pg from 'pg';
import { onFailedQuery } from './failed-query-hook.js';

/**
 * Works around drizzle-orm 0.45's node-postgres `transaction()`, which sends BEGIN before the
 * try/finally that releases its pool client (drizzle-team/drizzle-orm#6241): a BEGIN that fails
 * (the connection died while idle in the pool, an administrator ended the session) leaks the
 * client, and a few database outages leave the pool with no connection to give, for good. Such a
 * client is released here, as broken, so the pool closes it and opens a new one. Remove once
 * drizzle releases it itself.
 */
export function releaseClientsWhoseBeginFails(pool: pg.Pool): void {
  onFailedQuery(pool, (client, query, err) => {
    if (!isBegin(query)) return;
    client.release(err instanceof Error ? err : new Error(String(err)));
    // Should drizzle release it too one day, that second call must not throw over the real error.
    client.release = () => {};
  });
}

function isBegin(query: unknown): boolean {
  const text = typeof query === 'string' ? query : (query as { text?: unknown } | null)?.text;
  return typeof text === 'string' && /^\s*begin\b/i.test(text);
}
