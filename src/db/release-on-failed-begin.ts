import type pg from 'pg';

/**
 * Works around drizzle-orm 0.45's node-postgres `transaction()`, which sends BEGIN before the
 * try/finally that releases its pool client (drizzle-team/drizzle-orm#6241): a BEGIN that fails
 * (the connection died while idle in the pool, an administrator ended the session) leaks the
 * client, and a few database outages leave the pool with no connection to give, for good. Such a
 * client is released here, as broken, so the pool closes it and opens a new one. Remove once
 * drizzle releases it itself.
 */
export function releaseClientsWhoseBeginFails(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const result = query(...args);
      if (!isBegin(args[0]) || !(result instanceof Promise)) return result;
      return result.catch((err: unknown) => {
        const poolClient = client as pg.PoolClient;
        poolClient.release(err instanceof Error ? err : new Error(String(err)));
        // Should drizzle release it too one day, that second call must not throw over the real error.
        poolClient.release = () => {};
        throw err;
      });
    }) as typeof client.query;
  });
}

function isBegin(query: unknown): boolean {
  const text = typeof query === 'string' ? query : (query as { text?: unknown } | null)?.text;
  return typeof text === 'string' && /^\s*begin\b/i.test(text);
}
