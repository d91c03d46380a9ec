import type pg from 'pg';

/** What pg fails a query with once its `query_timeout` passes without an answer. */
export const QUERY_READ_TIMEOUT = 'Query read timeout';

/**
 * A query past pg's `query_timeout` fails, but pg goes on waiting for its answer on that
 * connection: the queries sent after it (a transaction's ROLLBACK) queue behind it, and a client
 * released without the error (as drizzle's transactions release theirs) goes back to the pool to
 * hang the next request too, until TCP gives up on a server that stopped answering. Destroying
 * the socket fails what is queued at once, and the pool drops the client (no longer queryable)
 * and opens a fresh one once the database answers again.
 */
export function dropConnectionsWhoseQueryTimesOut(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const drop = (err: unknown) => {
      if (err instanceof Error && err.message === QUERY_READ_TIMEOUT) (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    };
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      // pg-pool's own `pool.query` passes a callback; drizzle's transactions use the promise.
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        args[args.length - 1] = (err: unknown, result: unknown) => {
          drop(err);
          (callback as (err: unknown, result: unknown) => void)(err, result);
        };
      }
      const result = query(...args);
      if (!(result instanceof Promise)) return result;
      return result.catch((err: unknown) => {
        drop(err);
        throw err;
      });
    }) as typeof client.query;
  });
}
