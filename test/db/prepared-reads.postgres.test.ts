import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { PREPARED_READS_PER_CONNECTION, queryPrepared } from '../../src/db/prepared-reads.js';
import { type RealPostgres, acquireRealPostgres, realPostgresSkipReason } from '../support/real-postgres.js';

const skipReason = await realPostgresSkipReason();

/** Reads run again and again (BM25 searches) are planned once per connection of the main pool. */
describe('prepared reads on the PostgreSQL server', () => {
  if (skipReason) {
    it.skip(`skipped: ${skipReason}`, () => {});
    return;
  }
  let server: RealPostgres;
  let database: Database;
  let main: pg.Pool;

  beforeAll(async () => {
    const acquired = await acquireRealPostgres();
    if ('skipReason' in acquired) throw new Error(acquired.skipReason);
    server = acquired;
    // One connection: every read meets the statements the ones before it prepared.
    database = await openDatabase({ url: server.url, poolSize: 1 });
    main = (database.db as unknown as { $client: pg.Pool }).$client;
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await server?.release();
  });

  /** The connection's prepared statements with how they were planned, as the server lists them. */
  const preparedHere = async () =>
    (
      await main.query<{ statement: string; generic: number; custom: number }>(
        `SELECT statement, generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements ORDER BY prepare_time`,
      )
    ).rows;

  it('runs a read with other values on one plan: prepared once, a generic plan from its first run', async () => {
    const read = (n: number) => queryPrepared<{ n: number }>(database.db, sql`SELECT ${n}::int * 2 AS n`);
    expect(await read(1)).toEqual([{ n: 2 }]);
    expect(await read(21)).toEqual([{ n: 42 }]);
    expect(await read(5)).toEqual([{ n: 10 }]);
    const [statement, ...others] = await preparedHere();
    expect(others).toEqual([]);
    expect(statement).toMatchObject({ statement: 'SELECT $1::int * 2 AS n', generic: 3, custom: 0 });
    // Drizzle's own statements on the same connection stay unnamed, each planned for its values.
    expect(await database.db.execute(sql`SELECT ${3}::int AS n`)).toMatchObject({ rows: [{ n: 3 }] });
    expect(await preparedHere()).toHaveLength(1);
  });

  it(`keeps at most ${PREPARED_READS_PER_CONNECTION} reads prepared on a connection, and runs again one it let go`, async () => {
    const read = (shape: number) => queryPrepared<{ n: number }>(database.db, sql`SELECT ${shape}::int + ${sql.raw(String(shape))} AS n`);
    for (let shape = 0; shape < PREPARED_READS_PER_CONNECTION + 8; shape++) expect(await read(shape)).toEqual([{ n: 2 * shape }]);
    // The connection lets its oldest statements go before it is handed out again.
    const kept = await preparedHere();
    expect(kept.length).toBeLessThanOrEqual(PREPARED_READS_PER_CONNECTION);
    expect(kept.map((s) => s.statement)).not.toContain('SELECT $1::int + 0 AS n');
    expect(await read(0)).toEqual([{ n: 0 }]);
  });

  it("survives a read's own failure on the same connection", async () => {
    const pid = async () => (await main.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const before = await pid();
    await expect(queryPrepared(database.db, sql`SELECT 1 / ${0}::int AS n`)).rejects.toMatchObject({ code: '22012' });
    expect(await queryPrepared(database.db, sql`SELECT 1 / ${1}::int AS n`)).toEqual([{ n: 1 }]);
    expect(await pid()).toBe(before);
  });
});
