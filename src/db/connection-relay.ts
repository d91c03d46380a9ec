import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import type { Db } from './database.js';
import * as schema from './schema/index.js';

/**
 * Runs the work of a lane of writers (a tenant's writers of a corpus, in turns through a
 * `KeyedConcurrencyLimit`) on pooled connections that one writer hands straight to the next while
 * others wait in the lane. A connection returned to the pool goes to whoever has waited longest
 * for one, and the lane's next writer would wait for one of its own while holding its place: under
 * load that wait is as long as its transaction, and the writers behind it wait for it too.
 */
export interface ConnectionRelay {
  /**
   * `work` on a handle bound to one connection: one a writer of `key` handed on, or a new checkout
   * from the pool. After it succeeds, the connection is handed on when more writers of `key` wait
   * (`waiting`) than connections already wait for them; otherwise, or after a failure, it goes
   * back to the pool. A handle without a pool (PGlite, a transaction) runs `work` as it is.
   */
  run<T>(key: string, work: (db: Db) => Promise<T>, waiting: () => number): Promise<T>;
}

/** One drizzle handle per connection, for as long as the pool keeps it. */
const handles = new WeakMap<pg.PoolClient, Db>();

function handleOf(client: pg.PoolClient): Db {
  let db = handles.get(client);
  if (!db) handles.set(client, (db = drizzle(client, { schema }) as unknown as Db));
  return db;
}

export function createConnectionRelay(db: Db): ConnectionRelay {
  const pool = (db as unknown as { $client?: unknown }).$client;
  if (!(pool instanceof pg.Pool)) return { run: (_key, work) => work(db) };
  /** Connections handed on, by lane, each for the next writer of its lane to start. */
  const handedOn = new Map<string, pg.PoolClient[]>();
  return {
    async run(key, work, waiting) {
      const spare = handedOn.get(key);
      const client = spare?.shift() ?? (await pool.connect());
      if (spare?.length === 0) handedOn.delete(key);
      let succeeded = false;
      try {
        const result = await work(handleOf(client));
        succeeded = true;
        return result;
      } finally {
        const handed = handedOn.get(key)?.length ?? 0;
        if (succeeded && waiting() > handed) {
          if (handed === 0) handedOn.set(key, [client]);
          else handedOn.get(key)!.push(client);
        } else client.release();
      }
    },
  };
}
