import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type Db, openDatabase } from '../../src/db/database.js';
import { apiKeys } from '../../src/db/schema/index.js';

const countOf = async (db: Db, table: ReturnType<typeof sql>) => {
  const { rows } = (await db.execute(sql`SELECT count(*)::int AS n FROM ${table}`)) as unknown as { rows: Array<{ n: number }> };
  return rows[0]!.n;
};

describe('in-memory PGlite from a migrated copy', () => {
  it('opens every in-memory database migrated and empty, whatever was written to the one copied', async () => {
    const first = await openDatabase({ dataDir: 'memory://' });
    const second = await openDatabase({ dataDir: 'memory://' });
    try {
      await first.db.insert(apiKeys).values({ tenantId: 'acme', keyHash: 'x', prefix: 'mr_first' });
      expect(await countOf(first.db, sql`api_keys`)).toBe(1);
      const third = await openDatabase({ dataDir: 'memory://' });
      try {
        for (const database of [second, third]) expect(await countOf(database.db, sql`api_keys`)).toBe(0);
        expect(await countOf(third.db, sql`drizzle.__drizzle_migrations`)).toBeGreaterThan(0);
      } finally {
        await third.close();
      }
    } finally {
      await second.close();
      await first.close();
    }
  });
});
