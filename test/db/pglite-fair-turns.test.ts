import { setImmediate } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { memories } from '../../src/db/schema/index.js';
import { asUrgentReads } from '../../src/db/urgent-reads.js';

describe("statements on PGlite's one connection, between turns of the event loop", () => {
  let database: Database;
  let client: PGlite;
  beforeAll(async () => {
    database = await openDatabase({ dataDir: 'memory://' });
    client = (database.db as unknown as { $client: PGlite }).$client;
  });
  afterAll(async () => {
    await database.close();
  });

  it('lets pending I/O callbacks run before each statement', async () => {
    let ioRan = false;
    const io = setImmediate().then(() => {
      ioRan = true;
    });
    await client.query('SELECT 1');
    expect(ioRan).toBe(true);
    await io;
  });

  it("runs a search's statements without waiting a turn of the loop: a busy loop's turn made every search statement wait for all other requests", async () => {
    const order: string[] = [];
    const other = database.db.execute(sql`SELECT 1`).then(() => order.push('other'));
    // Awaited inside, as the searches issue theirs; issued after the other, it still runs first.
    const search = asUrgentReads(async () => {
      await database.db.select({ key: memories.key }).from(memories).limit(1);
      order.push('search');
    });
    await Promise.all([other, search]);
    expect(order).toEqual(['search', 'other']);
  });

  it('runs in order the statements of code that is not searching', async () => {
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((i) => client.query('SELECT 1').then(() => order.push(i))));
    expect(order).toEqual([1, 2, 3]);
  });
});
