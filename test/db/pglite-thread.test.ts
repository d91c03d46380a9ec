import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite, type QueryOptions } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { isDatabaseUnavailable } from '../../src/db/database-unavailable.js';
import { PgliteThread } from '../../src/db/pglite-thread.js';
import { call, createApp, createTestContext } from '../http/http-test-context.js';

const rowsOf = async (database: Database, query: ReturnType<typeof sql>) =>
  ((await database.db.execute(query)) as unknown as { rows: Record<string, unknown>[] }).rows;

// Values of every kind the schema stores, as the driver hands them to drizzle: timestamps as raw
// text (drizzle's parsers), int8, jsonb, text[], vectors and bytea.
const EVERY_KIND = sql`SELECT '2026-11-29 10:00:00+00'::timestamptz AS at, '2026-11-29'::date AS day, ARRAY['2026-11-29 10:00:00+00'::timestamptz] AS ats,
  9007199254740993::int8 AS big, '{"a":[1,"x"]}'::jsonb AS doc, ARRAY['x','y']::text[] AS tags, '[1,2.5,3]'::vector AS v,
  '\\x0102'::bytea AS bytes, NULL::text AS nothing, 1.5::float8 AS f`;

describe('PGlite in a thread of its own (PGLITE_THREAD)', () => {
  let root: string;
  let threaded: Database;
  let inProcess: Database;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'memrag-pglite-thread-'));
    [threaded, inProcess] = await Promise.all([openDatabase({ dataDir: path.join(root, 'data'), pgliteThread: true }), openDatabase({ dataDir: 'memory://' })]);
  });
  afterAll(async () => {
    await Promise.all([threaded?.close(), inProcess?.close()]);
    await rm(root, { recursive: true, force: true });
  });

  it('returns what PGlite in this thread returns, value for value', async () => {
    const [there, here] = await Promise.all([rowsOf(threaded, EVERY_KIND), rowsOf(inProcess, EVERY_KIND)]);
    expect(there).toEqual(here);
    expect(typeof there[0]!.at).toBe('string');
  });

  it('binds a vector given as bytes (binary wire format), as in this thread', async () => {
    const bytes = Buffer.alloc(4 + 4 * 2);
    bytes.writeInt16BE(2, 0);
    bytes.writeFloatBE(0.5, 4);
    bytes.writeFloatBE(-1, 8);
    const [row] = await rowsOf(threaded, sql`SELECT ${bytes}::vector::text AS v`);
    expect(row!.v).toBe('[0.5,-1]');
  });

  it('commits a transaction, and rolls back one whose callback throws or that rolls itself back', async () => {
    await threaded.db.execute(sql`CREATE TABLE thread_rows (n int PRIMARY KEY)`);
    await threaded.db.transaction(async (tx) => {
      await tx.execute(sql`INSERT INTO thread_rows VALUES (1)`);
      // A savepoint inside it, rolled back on its own.
      await tx
        .transaction(async (inner) => {
          await inner.execute(sql`INSERT INTO thread_rows VALUES (2)`);
          inner.rollback();
        })
        .catch(() => {});
    });
    await expect(
      threaded.db.transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO thread_rows VALUES (3)`);
        throw new Error('the caller failed');
      }),
    ).rejects.toThrow('the caller failed');
    await threaded.db
      .transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO thread_rows VALUES (4)`);
        tx.rollback();
      })
      .catch(() => {});
    expect(await rowsOf(threaded, sql`SELECT n FROM thread_rows ORDER BY n`)).toEqual([{ n: 1 }]);
  });

  it("keeps PostgreSQL's error fields across the thread: a unique violation has its code and constraint", async () => {
    const failure = await threaded.db.execute(sql`INSERT INTO thread_rows VALUES (1)`).catch((error: unknown) => error);
    const cause = (failure as { cause?: Record<string, unknown> }).cause;
    expect(cause).toMatchObject({ code: '23505', constraint: 'thread_rows_pkey' });
    expect(isDatabaseUnavailable(failure)).toBe(false);
  });

  it('runs a statement from outside an open transaction only once it has ended, as PGlite in this thread does', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedOnce = new Promise<void>((resolve) => (inserted = resolve));
    const transaction = threaded.db
      .transaction(async (tx) => {
        await tx.execute(sql`INSERT INTO thread_rows VALUES (10)`);
        inserted();
        await held;
        throw new Error('rolled back');
      })
      .catch(() => {});
    await insertedOnce;
    let settled = false;
    const outside = rowsOf(threaded, sql`SELECT count(*)::int AS n FROM thread_rows WHERE n = 10`).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(settled).toBe(false);
    release();
    await transaction;
    // Run inside the open transaction instead, it would have seen the row it rolled back.
    expect(await outside).toEqual([{ n: 0 }]);
  });

  it('fails the statements out and every later one as unavailable when its thread dies', async () => {
    const database = await openDatabase({ dataDir: 'memory://', pgliteThread: true });
    const thread = (database.db as unknown as { $client: { worker: { terminate(): Promise<number> } } }).$client;
    const running = database.db.execute(sql`SELECT pg_sleep(0.5)`).catch((error: unknown) => error);
    await thread.worker.terminate();
    expect(isDatabaseUnavailable(await running)).toBe(true);
    expect(isDatabaseUnavailable(await database.db.execute(sql`SELECT 1`).catch((error: unknown) => error))).toBe(true);
    await database.close();
  });

  it('keeps what it wrote in its data directory once closed, and fails later statements as unavailable', async () => {
    const dataDir = path.join(root, 'reopened');
    const first = await openDatabase({ dataDir, pgliteThread: true });
    await first.db.execute(sql`CREATE TABLE kept (s text)`);
    await first.db.execute(sql`INSERT INTO kept VALUES ('written')`);
    await first.close();
    const late = await first.db.execute(sql`SELECT 1`).catch((error: unknown) => error);
    expect(isDatabaseUnavailable(late)).toBe(true);
    const second = await openDatabase({ dataDir, pgliteThread: true });
    try {
      expect(await rowsOf(second, sql`SELECT s FROM kept`)).toEqual([{ s: 'written' }]);
    } finally {
      await second.close();
    }
  });
});

describe('PgliteThread against PGlite in this thread', () => {
  let thread: PgliteThread;
  let here: PGlite;
  beforeAll(async () => {
    [thread, here] = await Promise.all([PgliteThread.open({}), PGlite.create()]);
  });
  afterAll(async () => {
    await Promise.all([thread?.close(), here?.close()]);
  });

  // Parsers cross as the types they are for: the thread returns those columns' raw text.
  const doubled: QueryOptions['parsers'] = { 23: (value: string) => Number(value) * 2 };

  it.each<[string, string, QueryOptions]>([
    ['objects', `SELECT 21 AS a, 'x'::text AS b, NULL::int AS c`, { parsers: doubled }],
    ['arrays', `SELECT 21 AS a, 'x'::text AS b, NULL::int AS c`, { parsers: doubled, rowMode: 'array' }],
    ['objects with two columns of one name', `SELECT 1 AS a, 'y'::text AS a`, { parsers: doubled }],
    ['arrays with two columns of one name', `SELECT 1 AS a, 'y'::text AS a`, { parsers: doubled, rowMode: 'array' }],
    ['an array type left to the default', `SELECT ARRAY[1, 2]::int[] AS list, 3 AS n`, { parsers: doubled }],
  ])('applies parsers as PGlite does: %s', async (_name, query, options) => {
    const [there, local] = await Promise.all([thread.query(query, [], options), here.query(query, [], options)]);
    expect(there.rows).toEqual(local.rows);
    expect(there.fields).toEqual(local.fields);
  });

  it('applies parsers to every result of several statements', async () => {
    const query = 'SELECT 1 AS a; SELECT 2 AS a';
    const [there, local] = await Promise.all([thread.exec(query, { parsers: doubled }), here.exec(query, { parsers: doubled })]);
    expect(there.map((result) => result.rows)).toEqual([[{ a: 2 }], [{ a: 4 }]]);
    expect(there.map((result) => result.rows)).toEqual(local.map((result) => result.rows));
  });

  it('rolls back a transaction that rolls itself back, whether its callback then returns or throws', async () => {
    await thread.transaction(async (tx) => {
      await tx.query('CREATE TABLE gone (a int)');
      await tx.rollback();
      expect(tx.closed).toBe(true);
      await expect(tx.query('SELECT 1')).rejects.toThrow('Transaction is closed');
    });
    await expect(
      thread.transaction(async (tx) => {
        await tx.query('CREATE TABLE gone (a int)');
        await tx.rollback();
        throw new Error('after its rollback');
      }),
    ).rejects.toThrow('after its rollback');
    expect((await thread.query<{ t: string | null }>(`SELECT to_regclass('gone')::text AS t`)).rows).toEqual([{ t: null }]);
  });

  it('fails a statement whose parameter cannot cross, and goes on serving', async () => {
    await expect(thread.query('SELECT $1::text AS s', [() => 'a function'])).rejects.toThrow();
    expect((await thread.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });
});

describe('the app on PGlite in a thread', () => {
  let root: string;
  let close: () => Promise<void>;
  let app: Hono;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'memrag-pglite-thread-app-'));
    const ctx = await createTestContext({ DATA_DIR: path.join(root, 'data'), PGLITE_THREAD: 'true' });
    close = () => ctx.close();
    app = createApp(ctx);
  });
  afterAll(async () => {
    await close?.();
    await rm(root, { recursive: true, force: true });
  });

  it('saves memories and finds them by hybrid search with a tag filter', async () => {
    for (const [key, content, tags] of [
      ['garden', 'The tomatoes were started before the marigolds', ['garden']],
      ['kitchen', 'The tomatoes went into a sauce on Sunday', ['kitchen']],
    ] as const) {
      const saved = await call(app, 'PUT', `/v1/memories/${key}`, { content, userId: 'ann', tags });
      expect(saved.status, JSON.stringify(saved.body)).toBeLessThan(300);
    }
    const search = async (body: object) => {
      const found = await call(app, 'POST', '/v1/memories/search', { query: 'when were the tomatoes started', userId: 'ann', ...body });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      return found.body.hits.map((hit: { memory: { key: string } }) => hit.memory.key);
    };
    expect(await search({})).toEqual(['garden', 'kitchen']);
    expect(await search({ tagsAny: ['kitchen'] })).toEqual(['kitchen']);
  });
});
