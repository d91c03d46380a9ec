import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/database.js';
import { memories } from '../../src/db/schema/index.js';
import { PREPARED_PER_CONNECTION, vectorSearchPoolOf } from '../../src/db/vector-search-connections.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { clusteredVectors, createTableEmbedder } from '../../testkit/vector-fixtures.js';
import { type RealPostgres, acquireRealPostgres, realPostgresSkipReason } from '../support/real-postgres.js';

const skipReason = await realPostgresSkipReason();

/** Vector searches on the server run on connections of their own, as prepared statements. */
describe('vector search connections on the PostgreSQL server', () => {
  if (skipReason) {
    it.skip(`skipped: ${skipReason}`, () => {});
    return;
  }
  const N = 600;
  const DIMS = 8;
  const vectors = clusteredVectors(N, DIMS, 11);
  const query = clusteredVectors(1, DIMS, 99)[0]!;
  const embedder = createTableEmbedder(DIMS, new Map([['q', query]]));
  const tagsOf = (i: number) => [`t${i % 100}`, ...(i % 50 === 7 ? ['rare'] : [])];
  let database: Database;
  let main: pg.Pool;
  let search: pg.Pool;
  const statements: string[] = [];

  let server: RealPostgres;

  beforeAll(async () => {
    const acquired = await acquireRealPostgres();
    if ('skipReason' in acquired) throw new Error(acquired.skipReason);
    server = acquired;
    // One connection of each kind: every search meets the statements the ones before it prepared.
    database = await openDatabase({ url: server.url, poolSize: 1 });
    await ensureVectorSpace(database.db, embedder);
    await database.db
      .insert(memories)
      .values(vectors.map((embedding, i) => ({ agentId: 'a', key: `m${i}`, content: `memory ${i}`, tags: tagsOf(i), embedding })));
    main = (database.db as unknown as { $client: pg.Pool }).$client;
    search = vectorSearchPoolOf(main)!;
    // Every statement a search connection is sent, by name when it has one.
    search.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        const first = args[0] as string | { name?: string; text: string };
        statements.push(typeof first === 'string' ? first : (first.name ?? first.text));
        return query(...args);
      }) as typeof client.query;
    });
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await server?.release();
  });

  const keysOf = async (store: ReturnType<typeof createPgMemoryStore>, filter: object) =>
    (await store.search('q', { agentId: 'a', topK: 5, mode: 'vector', ...filter })).map((h) => h.memory.key);

  it('leaves the sessions of the pool every other statement uses as they were', async () => {
    const store = createPgMemoryStore({ db: database.db, embedder });
    expect(await keysOf(store, { tagsAny: ['rare'] })).toHaveLength(5);
    expect(await keysOf(store, {})).toHaveLength(5);
    const settings = async (pool: pg.Pool) => {
      const client = await pool.connect();
      try {
        return (await client.query(`SELECT current_setting('enable_sort') AS sort, current_setting('jit') AS jit, current_setting('plan_cache_mode') AS plans`))
          .rows[0];
      } finally {
        client.release();
      }
    };
    expect(await settings(main)).toEqual({ sort: 'on', jit: expect.any(String), plans: 'auto' });
    expect(await settings(search)).toEqual({ sort: 'off', jit: 'off', plans: 'force_generic_plan' });
  });

  it("takes the statement's own max_scan_tuples: a scan that gives up early is made up by the exact statement", async () => {
    // 12 of 600 rows carry the tag: a scan of 5 candidates that may go no further finds few of them.
    const exactNeeded = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 0, walkCost: 0, efSearch: 1, maxScanTuples: 1 });
    const indexEnough = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 0, walkCost: 0, efSearch: 1, maxScanTuples: 20_000 });
    // The first runs are messages (each filter is prepared on its second run on a connection).
    const found = await keysOf(exactNeeded, { tagsAny: ['rare'] });
    expect(await keysOf(indexEnough, { tagsAny: ['rare'] })).toEqual(found);
    statements.length = 0;
    expect(await keysOf(exactNeeded, { tagsAny: ['rare'] })).toEqual(found);
    expect(statements.filter((s) => s.startsWith('memrag_vector_exact_'))).toHaveLength(1);
    statements.length = 0;
    expect(await keysOf(indexEnough, { tagsAny: ['rare'] })).toEqual(found);
    expect(statements.filter((s) => s.startsWith('memrag_vector_exact_'))).toHaveLength(0);
  });

  it('prepares a filter on its second run on a connection, not its first: a message of two statements runs it once', async () => {
    const store = createPgMemoryStore({ db: database.db, embedder });
    statements.length = 0;
    const first = await keysOf(store, { tagsAny: ['t42'] });
    expect(statements).toEqual([expect.stringMatching(/^SELECT exact,.*;\s*SELECT /s)]);
    statements.length = 0;
    expect(await keysOf(store, { tagsAny: ['t42'] })).toEqual(first);
    expect(statements).toEqual([expect.stringMatching(/^memrag_vector_search_/)]);
  });

  it('plans a prepared search once on its connection, not at each of its runs', async () => {
    const store = createPgMemoryStore({ db: database.db, embedder });
    // The first run is a message; the three after it run the prepared statement.
    const found = await keysOf(store, { tagsAny: ['t17'] });
    for (let run = 0; run < 3; run++) expect(await keysOf(store, { tagsAny: ['t17'] })).toEqual(found);
    const client = await search.connect();
    try {
      const name = statements.filter((s) => s.startsWith('memrag_vector_search_')).at(-1);
      const { rows } = await client.query(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1`, [name]);
      // Left to the server, each of a statement's first five runs is planned for its values.
      expect(rows).toEqual([{ generic_plans: '3', custom_plans: '0' }]);
    } finally {
      client.release();
    }
  });

  it('answers a filter nothing matches with one statement: its row of nulls carries the estimate', async () => {
    const store = createPgMemoryStore({ db: database.db, embedder });
    await keysOf(store, { tagsAny: ['no-such-tag'] });
    await keysOf(store, { tagsAll: ['rare', 't1'] });
    statements.length = 0;
    expect(await keysOf(store, { tagsAny: ['no-such-tag'] })).toEqual([]);
    expect(await keysOf(store, { tagsAll: ['rare', 't1'] })).toEqual([]);
    expect(statements.filter((s) => s.startsWith('memrag_vector_'))).toEqual([
      expect.stringMatching(/^memrag_vector_search_/),
      expect.stringMatching(/^memrag_vector_search_/),
    ]);
  });

  it(`keeps at most ${PREPARED_PER_CONNECTION} statements prepared on a connection, and searches again with one it let go`, async () => {
    const store = createPgMemoryStore({ db: database.db, embedder });
    const first = await keysOf(store, { tagsAny: ['t0'] });
    for (let t = 1; t < PREPARED_PER_CONNECTION + 10; t++) {
      await keysOf(store, { tagsAny: [`t${t % 100}`] });
      await keysOf(store, { tagsAny: [`t${t % 100}`] });
    }
    expect(await keysOf(store, { tagsAny: ['t0'] })).toEqual(first);
    const client = await search.connect();
    try {
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name LIKE 'memrag_vector_%'`);
      expect(rows[0]!.n).toBeGreaterThan(0);
      expect(rows[0]!.n).toBeLessThanOrEqual(PREPARED_PER_CONNECTION);
    } finally {
      client.release();
    }
  });
});
