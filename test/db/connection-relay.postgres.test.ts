import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnectionRelay } from '../../src/db/connection-relay.js';
import { type Database, type Db, openDatabase } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { KeyedConcurrencyLimit } from '../../src/util/keyed-concurrency-limit.js';
import { type RealPostgres, acquireRealPostgres, realPostgresSkipReason } from '../support/real-postgres.js';
import { signal } from '../support/signal.js';

const skipReason = await realPostgresSkipReason();

const backend = async (db: Db) => (await queryRows<{ pid: number }>(db, sql`SELECT pg_backend_pid() AS pid`))[0]!.pid;

describe('connection relay on the PostgreSQL server', () => {
  if (skipReason) {
    it.skip(`skipped: ${skipReason}`, () => {});
    return;
  }
  let server: RealPostgres;
  let database: Database;
  let pool: pg.Pool;

  beforeAll(async () => {
    const acquired = await acquireRealPostgres();
    if ('skipReason' in acquired) throw new Error(acquired.skipReason);
    server = acquired;
    database = await openDatabase({ url: server.url, poolSize: 3 });
    pool = (database.db as unknown as { $client: pg.Pool }).$client;
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await server?.release();
  });

  /**
   * `count` writers of one lane of one place, each noting its connection and when it finished; the
   * first holds the lane until all have queued. With `contended`, the pool's other connections are
   * held elsewhere and one more checkout waits in the pool's queue, ahead of the lane's writers.
   */
  async function lane(count: number, { failing = new Set<number>(), contended = false } = {}) {
    const limit = new KeyedConcurrencyLimit(1);
    const relay = createConnectionRelay(database.db);
    const gate = signal();
    const pids: number[] = [];
    const log: string[] = [];
    const held = contended ? await Promise.all([pool.connect(), pool.connect()]) : [];
    const writers = Array.from({ length: count }, (_, i) =>
      limit.run('lane', () =>
        relay.run(
          'lane',
          async (db) => {
            await db.transaction(async (tx) => {
              pids[i] = await backend(tx);
              if (i === 0) await gate.promise;
              if (failing.has(i)) throw new Error(`writer ${i} failed`);
            });
            log.push(`writer ${i}`);
          },
          () => limit.waiting('lane'),
        ),
      ),
    );
    while (limit.waiting('lane') < count - 1) await new Promise((r) => setTimeout(r, 5));
    const outside = contended
      ? pool.connect().then((client) => {
          log.push('outside');
          client.release();
        })
      : Promise.resolve();
    gate.resolve();
    const settled = await Promise.allSettled(writers);
    await outside;
    for (const client of held) client.release();
    return { pids, log, settled };
  }

  it('hands a writer’s connection to the next writer of its lane before a checkout queued in the pool, and the last one back', async () => {
    const { pids, log, settled } = await lane(3, { contended: true });
    expect(settled.every((s) => s.status === 'fulfilled')).toBe(true);
    expect(new Set(pids).size).toBe(1);
    expect(log).toEqual(['writer 0', 'writer 1', 'writer 2', 'outside']);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });

  it('gives a failed writer’s connection back to the pool and checks out another for the next', async () => {
    const { pids, settled } = await lane(3, { failing: new Set([1]) });
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    // The first handed its connection to the second; the second failed, so the third checked one out.
    expect(pids[1]).toBe(pids[0]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });

  it('leaves the pool to writers of other lanes: one lane hands on, another checks out', async () => {
    const relay = createConnectionRelay(database.db);
    const pids = await Promise.all([relay.run('a', backend, () => 0), relay.run('b', backend, () => 0)]);
    expect(pids[0]).not.toBe(pids[1]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });
});

describe('connection relay on PGlite', () => {
  it('runs the work on the handle as it is', async () => {
    const pglite = await openDatabase();
    try {
      const relay = createConnectionRelay(pglite.db);
      let seen: Db | undefined;
      await relay.run(
        'lane',
        async (d) => void (seen = d),
        () => 1,
      );
      expect(seen).toBe(pglite.db);
    } finally {
      await pglite.close();
    }
  });
});
