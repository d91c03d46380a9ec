import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { describeOnDrivers, type ProvisionedDatabase } from '../support/database-drivers.js';

describeOnDrivers(
  'reportPoolWaits',
  (driver) => {
    let provisioned: ProvisionedDatabase;
    let database: Database;
    const waits: number[] = [];
    beforeAll(async () => {
      provisioned = await driver.provision();
      database = await openDatabase({ url: provisioned.env.DATABASE_URL!, poolSize: 2, onPoolWait: (seconds) => waits.push(seconds) });
    });
    afterAll(async () => {
      await database?.close();
      await provisioned?.release();
    });

    it('reports each checkout, near zero while a connection is idle and the queueing time when none is', async () => {
      await database.db.execute(sql`SELECT 1`);
      expect(waits).toHaveLength(1);
      waits.length = 0;
      // Two connections, four statements of 200 ms: two start at once, two wait for them.
      await Promise.all(Array.from({ length: 4 }, () => database.db.execute(sql`SELECT pg_sleep(0.2)`)));
      expect(waits).toHaveLength(4);
      const sorted = [...waits].sort((a, b) => a - b);
      expect(sorted[1]!).toBeLessThan(0.15);
      expect(sorted[2]!).toBeGreaterThanOrEqual(0.15);
      // A transaction checks out once.
      waits.length = 0;
      await database.db.transaction(async (tx) => {
        await tx.execute(sql`SELECT 1`);
        await tx.execute(sql`SELECT 2`);
      });
      expect(waits).toHaveLength(1);
    });
  },
  { drivers: ['PostgreSQL server'] },
);
