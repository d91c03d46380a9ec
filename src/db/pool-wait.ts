import type pg from 'pg';

type ConnectCallback = (err: Error | undefined, client: pg.PoolClient | undefined, release: (err?: Error | boolean) => void) => void;

/**
 * Reports how long each checkout of a pooled connection waited: a query outside a transaction
 * (pg's `pool.query` checks one out through `connect` too) or a transaction's. Near zero while the
 * pool has idle connections; the time spent queued behind busy ones when it has none.
 */
export function reportPoolWaits(pool: pg.Pool, report: (seconds: number) => void): void {
  const connect = pool.connect.bind(pool) as (callback?: ConnectCallback) => Promise<pg.PoolClient> | undefined;
  const timed = (callback?: ConnectCallback) => {
    const started = performance.now();
    const done = () => report((performance.now() - started) / 1000);
    if (callback) {
      return connect((err, client, release) => {
        done();
        callback(err, client, release);
      });
    }
    return connect()!.then(
      (client) => {
        done();
        return client;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
  };
  pool.connect = timed as typeof pool.connect;
}
