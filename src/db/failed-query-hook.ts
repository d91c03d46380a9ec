import type pg from 'pg';

/**
 * Calls `onFailure` with the client, the query (text or config) and the error whenever a query of
 * one of the pool's clients fails, before its caller hears of it, whether the caller waits on
 * the promise (drizzle) or passed a callback (pg-pool's own `pool.query`). For the workarounds
 * that must act on the connection a failure leaves behind.
 */
export function onFailedQuery(pool: pg.Pool, onFailure: (client: pg.PoolClient, query: unknown, err: unknown) => void): void {
  pool.on('connect', (connected) => {
    const client = connected as pg.PoolClient;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        args[args.length - 1] = (err: unknown, result: unknown) => {
          if (err) onFailure(client, args[0], err);
          (callback as (err: unknown, result: unknown) => void)(err, result);
        };
      }
      const result = query(...args);
      if (!(result instanceof Promise)) return result;
      return result.catch((err: unknown) => {
        onFailure(client, args[0], err);
        throw err;
      });
    }) as typeof client.query;
  });
}
