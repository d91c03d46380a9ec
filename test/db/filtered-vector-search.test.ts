import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { sql } from 'drizzle-orm';
import { walkSize } from '../../src/db/filtered-vector-search.js';
import { queryRows } from '../../src/db/query-rows.js';
import { memories } from '../../src/db/schema/index.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { clusteredVectors, createTableEmbedder } from '../../testkit/vector-fixtures.js';
import { describeOnDrivers } from '../support/database-drivers.js';

const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / (Math.hypot(...a) * Math.hypot(...b));

describeOnDrivers('filtered vector search', (driver) => {
  const N = 2000;
  const DIMS = 16;
  const vectors = clusteredVectors(N, DIMS, 3);
  const queries = clusteredVectors(5, DIMS, 4242);
  const embedder = createTableEmbedder(DIMS, new Map(queries.map((q, i) => [`q${i}`, q])));
  const tagsOf = (i: number) => [...(i % 10 === 1 ? ['common'] : []), ...(i % 100 === 7 ? ['rare'] : [])];
  const userOf = (i: number) => (i % 4 === 0 ? 'u1' : '');
  let database: Database;

  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, embedder);
    for (let start = 0; start < N; start += 500) {
      await database.db.insert(memories).values(
        vectors.slice(start, start + 500).map((embedding, j) => {
          const i = start + j;
          return {
            agentId: 'a',
            userId: userOf(i),
            key: `m${i}`,
            content: `memory ${i}`,
            tags: tagsOf(i),
            metadata: { rare: tagsOf(i).includes('rare') },
            embedding,
          };
        }),
      );
    }
  }, 300_000);
  afterAll(async () => {
    await database?.close();
  });

  const exact = (q: number, keep: (i: number) => boolean, k = 10) =>
    vectors
      .map((v, i) => ({ i, s: cosine(v, queries[q]!) }))
      .filter(({ i }) => keep(i))
      .sort((a, b) => b.s - a.s)
      .slice(0, k)
      .map(({ i }) => `m${i}`);

  it('returns the full topK of a rare tag when the index path comes short (the iterative scan gives up early)', async () => {
    // Every search takes the index, and the index may visit 30 rows: 20 rows carry the tag, so
    // the scan ends with a few of them at most, and the exact scan must make up the rest.
    const store = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 0, walkCost: 0, maxScanTuples: 30 });
    for (let q = 0; q < queries.length; q++) {
      const hits = await store.search(`q${q}`, { agentId: 'a', tagsAny: ['rare'], topK: 10, mode: 'vector' });
      expect(hits.map((h) => h.memory.key)).toEqual(exact(q, (i) => tagsOf(i).includes('rare')));
    }
  });

  it('ranks as an exact scan does on a small set: no filter, tags, a user with the shared memories, metadata', async () => {
    const store = createPgMemoryStore({ db: database.db, embedder });
    for (let q = 0; q < queries.length; q++) {
      const search = async (filter: object) => (await store.search(`q${q}`, { agentId: 'a', topK: 10, mode: 'vector', ...filter })).map((h) => h.memory.key);
      expect(await search({})).toEqual(exact(q, () => true));
      expect(await search({ tagsAny: ['common'] })).toEqual(exact(q, (i) => tagsOf(i).includes('common')));
      expect(await search({ tagsAll: ['common', 'rare'] })).toEqual(exact(q, (i) => tagsOf(i).includes('common') && tagsOf(i).includes('rare')));
      expect(await search({ userId: 'u1', includeShared: true, tagsNone: ['common'] })).toEqual(exact(q, (i) => !tagsOf(i).includes('common')));
      expect(await search({ userId: 'u1' })).toEqual(exact(q, (i) => userOf(i) === 'u1'));
      expect(await search({ metadata: { key: 'rare', op: 'eq', value: true } })).toEqual(exact(q, (i) => tagsOf(i).includes('rare')));
    }
  });

  it('ranks through the index as an exact scan does when the filter passes most rows', async () => {
    const store = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 0, walkCost: 0 });
    let same = 0;
    for (let q = 0; q < queries.length; q++) {
      const hits = await store.search(`q${q}`, { agentId: 'a', topK: 10, mode: 'vector' });
      expect(hits).toHaveLength(10);
      same += hits.filter((h) => exact(q, () => true).includes(h.memory.key)).length;
    }
    // ef_search 80 over 2,000 rows: the graph's search finds the exact 10 nearest, or nearly.
    expect(same / (queries.length * 10)).toBeGreaterThanOrEqual(0.98);
  });

  it('walks a counted tag from a list widened to hold twice topK of its rows, and ranks it as an exact scan does', async () => {
    await database.db.execute(sql`ANALYZE memories`);
    const size = async (estimate: number, counts = true) =>
      (
        await queryRows<{ ef: number; walk_rows: number }>(
          database.db,
          sql`SELECT ef, walk_rows FROM ${walkSize(memories, sql.raw(String(estimate)), { limit: 10, fetched: 20, efSearch: 80, counts, exactScanMaxRows: 0, walkCost: 0 })} AS s`,
        )
      )[0];
    // 200 of 2,000 rows: a list of 200 holds about 20 of them.
    expect(await size(200)).toEqual({ ef: 200, walk_rows: 10 });
    // Most rows: the list as it is holds them.
    expect(await size(1500)).toEqual({ ef: 80, walk_rows: 10 });
    // 20 rows would want a list of 2,000, past four times ef_search: 20 rows fetched past a list of 80.
    expect(await size(20)).toEqual({ ef: 80, walk_rows: 20 });
    // A bound, not a count: never widened.
    expect(await size(200, false)).toEqual({ ef: 80, walk_rows: 20 });
    const store = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 0, walkCost: 0 });
    for (let q = 0; q < queries.length; q++) {
      const hits = await store.search(`q${q}`, { agentId: 'a', tagsAny: ['common'], topK: 10, mode: 'vector' });
      expect(hits.map((h) => h.memory.key)).toEqual(exact(q, (i) => tagsOf(i).includes('common')));
    }
  });

  it('ranks a tag exactly while its rows cost less than the rows a walk would pass (walkCost)', async () => {
    await database.db.execute(sql`ANALYZE memories`);
    const path = async (estimate: number, walkCost: number, exactScanMaxRows = 10) =>
      (
        await queryRows<{ exact: boolean }>(
          database.db,
          sql`SELECT exact FROM ${walkSize(memories, sql.raw(String(estimate)), { limit: 10, fetched: 20, efSearch: 80, counts: true, exactScanMaxRows, walkCost })} AS s`,
        )
      )[0]!.exact;
    // 2,000 rows, 20 fetched, a walk 6 times an exact row: exact up to sqrt(6 x 20 x 2,000) = 489 rows.
    expect(await path(489, 6)).toBe(true);
    expect(await path(490, 6)).toBe(false);
    // Without the weighing, only exactScanMaxRows decides.
    expect(await path(200, 0)).toBe(false);
    expect(await path(10, 0)).toBe(true);
    // Under exactScanMaxRows, always exact.
    expect(await path(1500, 6, 1500)).toBe(true);
    // The 10% tag (200 rows) goes the exact way by default and the walk's way without it: both rank alike.
    const weighed = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 10 });
    const walked = createPgMemoryStore({ db: database.db, embedder, exactScanMaxRows: 10, walkCost: 0 });
    for (let q = 0; q < queries.length; q++) {
      const want = exact(q, (i) => tagsOf(i).includes('common'));
      for (const store of [weighed, walked]) {
        const hits = await store.search(`q${q}`, { agentId: 'a', tagsAny: ['common'], topK: 10, mode: 'vector' });
        expect(hits.map((h) => h.memory.key)).toEqual(want);
      }
    }
  });
});
