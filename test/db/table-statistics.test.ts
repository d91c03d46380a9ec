import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { type TableStatistics, startTableStatistics } from '../../src/db/table-statistics.js';
import { queryRows } from '../../src/db/query-rows.js';
import { describeOnDrivers } from '../support/database-drivers.js';

interface TableCounters {
  seq_scan: number;
  idx_scan: number;
  n_mod_since_analyze: number;
}

describe('startTableStatistics (PGlite)', () => {
  let client: PGlite;
  let autoAnalyze: TableStatistics;

  beforeEach(async () => {
    client = await PGlite.create();
    await client.exec(`
      CREATE TABLE parent (id int PRIMARY KEY, pad text);
      CREATE TABLE child (parent_id int NOT NULL REFERENCES parent (id), n int);
      CREATE TABLE quiet (id int PRIMARY KEY);
      ANALYZE;`);
    // Only explicit checks here: the timer is the subject of the last test.
    autoAnalyze = startTableStatistics(client, { intervalMs: 3_600_000 });
  });
  afterEach(async () => {
    await autoAnalyze.stop();
    await client.close();
  });

  /** The table's counters, with this session's pending counts flushed first. */
  async function counters(table: string): Promise<TableCounters> {
    await client.query('SELECT pg_stat_force_next_flush()');
    await client.query('SELECT 1');
    const { rows } = await client.query<TableCounters>(
      'SELECT seq_scan::int, idx_scan::int, n_mod_since_analyze::int FROM pg_stat_user_tables WHERE relname = $1',
      [table],
    );
    return rows[0]!;
  }

  /** Parents and their children, 100 at a time, as an ingest writes chunks and then their postings. */
  async function grow(batches: number): Promise<void> {
    for (let i = 0; i < batches; i++) {
      await client.query(`INSERT INTO parent SELECT g, repeat('x', 200) FROM generate_series($1::int, $1::int + 99) g`, [i * 100]);
      await client.query('INSERT INTO child SELECT g, 1 FROM generate_series($1::int, $1::int + 99) g', [i * 100]);
    }
  }

  it('foreign-key checks kept the sequential scan planned on an empty table as the table grew', async () => {
    await grow(20);
    const before = await counters('parent');
    // The check's plan is cached from the first insert, when parent had no rows: every one of the
    // 2,000 checks so far read the whole table.
    expect(before.seq_scan).toBeGreaterThanOrEqual(2_000);
    expect(before.idx_scan).toBe(0);

    await client.query('INSERT INTO child SELECT g, 1 FROM generate_series(0, 99) g');
    const stale = await counters('parent');
    expect(stale.seq_scan - before.seq_scan).toBe(100);

    expect(await autoAnalyze.runOnce()).toEqual(['"public"."child"', '"public"."parent"']);
    await client.query('INSERT INTO child SELECT g, 1 FROM generate_series(0, 99) g');
    const after = await counters('parent');
    expect(after.seq_scan).toBe(stale.seq_scan);
    expect(after.idx_scan - stale.idx_scan).toBe(100);
  });

  it("analyzes only the tables whose writes pass autovacuum's threshold: 50 rows plus 10% of the table", async () => {
    await client.query('INSERT INTO quiet SELECT generate_series(1, 50)');
    await grow(1);
    await counters('quiet');
    expect(await autoAnalyze.runOnce()).toEqual(['"public"."child"', '"public"."parent"']);
    expect((await counters('parent')).n_mod_since_analyze).toBe(0);
    expect((await counters('quiet')).n_mod_since_analyze).toBe(50);

    // parent now holds 100 rows: its threshold is 50 + 10, and 60 writes do not pass it.
    await client.query(`INSERT INTO parent SELECT g, '' FROM generate_series(1000, 1059) g`);
    await counters('parent');
    expect(await autoAnalyze.runOnce()).toEqual([]);
    // One more row passes it, as the 51st of quiet passes quiet's.
    await client.query(`INSERT INTO parent VALUES (1060, '')`);
    await client.query('INSERT INTO quiet VALUES (51)');
    await counters('parent');
    expect(await autoAnalyze.runOnce()).toEqual(['"public"."parent"', '"public"."quiet"']);
    expect(await autoAnalyze.runOnce()).toEqual([]);
  });

  it('quotes the names of the tables it analyzes', async () => {
    await client.exec(`CREATE SCHEMA "odd ""schema"""; CREATE TABLE "odd ""schema"""."Mixed Case" (id int)`);
    await client.query(`INSERT INTO "odd ""schema"""."Mixed Case" SELECT generate_series(1, 100)`);
    await counters('Mixed Case');
    expect(await autoAnalyze.runOnce()).toEqual(['"odd ""schema"""."Mixed Case"']);
  });
});

describe('openDatabase (PGlite) keeps planner statistics up to date', () => {
  it('analyzes a table that grew, on its timer, and stops with close()', async () => {
    const database = await openDatabase({ analyzeIntervalMs: 50 });
    try {
      await database.db.execute(sql`CREATE TABLE grown (id int PRIMARY KEY)`);
      await database.db.execute(sql`INSERT INTO grown SELECT generate_series(1, 500)`);
      // Counters reach the statistics views when the session flushes them, at most once a second.
      await vi.waitFor(
        async () => {
          await database.db.execute(sql`SELECT pg_stat_force_next_flush()`);
          const [row] = await queryRows<{ reltuples: number }>(database.db, sql`SELECT reltuples::int AS reltuples FROM pg_class WHERE relname = 'grown'`);
          expect(row!.reltuples).toBe(500);
        },
        { timeout: 10_000, interval: 100 },
      );
    } finally {
      await database.close();
    }
  });
});

describeOnDrivers('TableStatistics after a bulk write', (driver) => {
  it('analyzes a table a bulk write grew at once, without waiting for write counters or the timer', async () => {
    const database = await driver.open();
    try {
      // The memories table as a fresh store has it: migrated, never analyzed on a server.
      await database.db.execute(sql`CREATE TABLE bulk (id int PRIMARY KEY, pad text)`);
      await database.db.execute(sql`INSERT INTO bulk SELECT g, repeat('x', 100) FROM generate_series(1, 2000) g`);
      await database.statistics.afterBulkWrite();
      const [row] = await queryRows<{ reltuples: number }>(database.db, sql`SELECT reltuples::int AS reltuples FROM pg_class WHERE relname = 'bulk'`);
      expect(row!.reltuples).toBe(2000);

      // Grown by more than the share since: analyzed again; by less: left alone.
      await database.db.execute(sql`INSERT INTO bulk SELECT g, repeat('x', 100) FROM generate_series(2001, 2100) g`);
      await database.statistics.afterBulkWrite();
      const [same] = await queryRows<{ reltuples: number }>(database.db, sql`SELECT reltuples::int AS reltuples FROM pg_class WHERE relname = 'bulk'`);
      expect(same!.reltuples).toBe(2000);
      await database.db.execute(sql`INSERT INTO bulk SELECT g, repeat('x', 100) FROM generate_series(2101, 3000) g`);
      await database.statistics.afterBulkWrite();
      const [grown] = await queryRows<{ reltuples: number }>(database.db, sql`SELECT reltuples::int AS reltuples FROM pg_class WHERE relname = 'bulk'`);
      expect(grown!.reltuples).toBe(3000);
    } finally {
      await database.close();
    }
  });

  it("reads the hot tables' own settings from migration 0011", async () => {
    const database = await driver.open();
    try {
      const rows = await queryRows<{ relname: string; reloptions: string[] }>(
        database.db,
        sql`SELECT relname, reloptions FROM pg_class WHERE relname IN ('memory_term_stats', 'vector_filter_stats', 'turn_postings') ORDER BY relname`,
      );
      expect(rows.map((r) => [r.relname, r.reloptions.filter((o) => /fillfactor|analyze_scale/.test(o))])).toEqual([
        ['memory_term_stats', ['fillfactor=70']],
        ['turn_postings', ['autovacuum_analyze_scale_factor=0.05']],
        ['vector_filter_stats', ['fillfactor=50']],
      ]);
    } finally {
      await database.close();
    }
  });
});
