import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { MEMORY_CORPUS } from '../../src/memory/memory-corpus.js';
import { defaultAnalyzer } from '../../src/retrieval/bm25/analyzer.js';
import { createCorpusIndex } from '../../src/retrieval/corpus-index.js';
import { describeOnDrivers } from '../support/database-drivers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeOnDrivers('CorpusIndex.write', (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(() => database?.close());

  it("queues a tenant's writers in the process: a waiting writer holds no connection and no lock wait", async () => {
    // Two stores of one tenant share the queue, as two requests' stores do.
    const [a, b] = [createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer), createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer)];
    const log: string[] = [];
    let lockWaiters = -1;
    const first = a.write(database.db, 'tenant-a', true, async () => {
      log.push('first starts');
      await sleep(150);
      log.push('first ends');
    });
    await sleep(20);
    const second = b.write(database.db, 'tenant-a', true, async () => {
      log.push('second starts');
    });
    const otherTenant = b.write(database.db, 'tenant-b', true, async () => {
      log.push('other tenant');
    });
    if (driver.name === 'PostgreSQL server') {
      await sleep(60);
      // On a connection of its own, while the first writer holds the tenant's lock.
      const [row] = await queryRows<{ n: number }>(
        database.db,
        sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      lockWaiters = row!.n;
    }
    await Promise.all([first, second, otherTenant]);
    expect(log.indexOf('second starts')).toBeGreaterThan(log.indexOf('first ends'));
    if (driver.name === 'PostgreSQL server') {
      expect(lockWaiters).toBe(0);
      // The other tenant did not wait for the first's writer.
      expect(log.indexOf('other tenant')).toBeLessThan(log.indexOf('first ends'));
    }
  });

  it("gives a failed write's error to its caller and runs the next", async () => {
    const index = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
    const failed = index.write(database.db, 'tenant-c', true, async () => {
      throw new Error('write failed');
    });
    const next = index.write(database.db, 'tenant-c', true, async () => 'written');
    await expect(failed).rejects.toThrow('write failed');
    expect(await next).toBe('written');
  });
});
