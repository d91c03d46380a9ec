/**
 * Memory search at scale on hand-made clustered vectors, on PGlite and/or a PostgreSQL server.
 * Prints insert rate, search p50/p95 (no filter, a 10% tag, a 0.2% tag), recall@10 against an
 * exact scan, and the rows returned for the rare tag.
 *
 *   npm run bench:memory                      # both drivers (pg via BENCH_DATABASE_URL or TEST_DATABASE_URL)
 *   BENCH_N=20000 BENCH_DRIVERS=pglite npm run bench:memory
 *
 * Then, in the same run, the reads at a moment: every memory gets its `created` event, 1% are
 * reworded after a moment T and 10% get a valid time that ended in 2021; searches (vector and
 * hybrid) as they are, with `validAt` in 2020, with `asOf` T, and with both, against the default.
 * BENCH_ASOF=0 leaves that part out.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.js';
import { memories } from '../../src/db/schema/index.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { clusteredVectors } from './lib/clustered-set.js';
import type { MemoryStore, SearchMemoriesOptions } from '../../src/memory/memory-types.js';

const N = Number(process.env.BENCH_N ?? 100_000);
const DIMS = Number(process.env.BENCH_DIMS ?? 512);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 100);
const TOP_K = 10;
const drivers = (process.env.BENCH_DRIVERS ?? 'pglite,pg').split(',');
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

const row = (data: Float32Array, i: number) => Array.from(data.subarray(i * DIMS, (i + 1) * DIMS));
const tagsOf = (i: number) => [...(i % 10 === 3 ? ['common'] : []), ...(i % 500 === 17 ? ['rare'] : [])];

function exactTopK(data: Float32Array, q: number[], filter: (i: number) => boolean): string[] {
  const best: { i: number; s: number }[] = [];
  for (let i = 0; i < N; i++) {
    if (!filter(i)) continue;
    let s = 0;
    for (let d = 0; d < DIMS; d++) s += data[i * DIMS + d]! * q[d]!;
    if (best.length < TOP_K || s > best[best.length - 1]!.s) {
      best.push({ i, s });
      best.sort((a, b) => b.s - a.s);
      if (best.length > TOP_K) best.pop();
    }
  }
  return best.map(({ i }) => `m${i}`);
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

// BENCH_REUSE=1 keeps the server's bench database when it already holds the same N rows.
const reuse = process.env.BENCH_REUSE === '1';

async function openFresh(driver: string): Promise<{ database: Database; filled: boolean }> {
  if (driver === 'pglite') return { database: await openDatabase({}), filled: false };
  if (!serverUrl) throw new Error('set BENCH_DATABASE_URL (or TEST_DATABASE_URL) for the pg driver');
  const url = new URL(serverUrl);
  url.pathname = '/memrag_bench';
  if (reuse) {
    const probe = new pg.Client({ connectionString: url.toString() });
    const rows = await probe
      .connect()
      .then(() => probe.query('SELECT count(*)::int AS n FROM memories'))
      .catch(() => null);
    await probe.end().catch(() => {});
    if (rows?.rows[0]?.n === N) return { database: await openDatabase({ url: url.toString() }), filled: true };
  }
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS memrag_bench WITH (FORCE)');
  await admin.query('CREATE DATABASE memrag_bench');
  await admin.end();
  return { database: await openDatabase({ url: url.toString() }), filled: false };
}

async function main() {
  console.log(`memory search bench: ${N} memories, ${DIMS} dims, ${QUERIES} queries, topK ${TOP_K}`);
  // Queries come from the same distribution as the memories but are not stored.
  const all = clusteredVectors(N + QUERIES, DIMS, 1);
  const data = all.subarray(0, N * DIMS);
  const queries = Array.from({ length: QUERIES }, (_, i) => row(all, N + i));
  const truth = {
    none: queries.map((q) => exactTopK(data, q, () => true)),
    common: queries.map((q) => exactTopK(data, q, (i) => i % 10 === 3)),
    rare: queries.map((q) => exactTopK(data, q, (i) => i % 500 === 17)),
  };
  const byText = new Map(queries.map((q, i) => [`q${i}`, q]));
  const embedder: Embedder = {
    id: `bench:clustered-${DIMS}`,
    dimensions: DIMS,
    maxInputTokens: 512,
    // A stored memory's text ("memory 12", "memory 12 reworded") embeds as that memory's vector.
    embed: async (texts) => texts.map((t) => byText.get(t) ?? row(data, Number(/^memory (\d+)/.exec(t)![1]))),
    close: async () => {},
  };

  const results: Record<string, string>[] = [];
  for (const driver of drivers) {
    const { database, filled } = await openFresh(driver);
    await ensureVectorSpace(database.db, embedder);
    const t0 = performance.now();
    const batch = 500;
    for (let start = filled ? N : 0; start < N; start += batch) {
      const values = [];
      for (let i = start; i < Math.min(N, start + batch); i++) {
        values.push({ agentId: 'bench', key: `m${i}`, content: `memory ${i}`, tags: tagsOf(i), embedding: row(data, i) });
      }
      await database.db.insert(memories).values(values);
    }
    const insertSeconds = (performance.now() - t0) / 1000;
    await database.db.execute(sql`VACUUM ANALYZE memories`);
    const store = createPgMemoryStore({ db: database.db, embedder });

    for (const [label, filter, want] of [
      ['no filter', {}, truth.none],
      ['10% tag', { tagsAny: ['common'] }, truth.common],
      ['0.2% tag', { tagsAny: ['rare'] }, truth.rare],
    ] as const) {
      // Vector mode: the bench measures the filtered vector search (and its recall) alone.
      for (let w = 0; w < 5; w++) await store.search(`q${w}`, { agentId: 'bench', topK: TOP_K, mode: 'vector', ...filter });
      const times: number[] = [];
      let hits = 0;
      let rows = 0;
      for (let q = 0; q < QUERIES; q++) {
        const s = performance.now();
        const got = await store.search(`q${q}`, { agentId: 'bench', topK: TOP_K, mode: 'vector', ...filter });
        times.push(performance.now() - s);
        rows += got.length;
        hits += got.filter((h) => want[q]!.includes(h.memory.key)).length;
      }
      results.push({
        driver,
        'insert rows/s': filled ? 'reused' : (N / insertSeconds).toFixed(0),
        case: label,
        'p50 ms': pct(times, 50).toFixed(2),
        'p95 ms': pct(times, 95).toFixed(2),
        'recall@10': (hits / (QUERIES * TOP_K)).toFixed(3),
        'rows/query': (rows / QUERIES).toFixed(1),
      });
      console.log(JSON.stringify(results[results.length - 1]));
    }
    if (process.env.BENCH_ASOF !== '0') results.push(...(await readsAtAMoment(database, store, queries.length, truth.none)));
    await database.close();
  }
  console.table(results);
}

/** Search latency as of a moment and at a valid time, against the default, in one run. */
async function readsAtAMoment(database: Database, store: MemoryStore, queries: number, truth: string[][]): Promise<Record<string, string>[]> {
  await database.db.execute(sql`DELETE FROM memory_history`);
  await database.db.execute(sql`INSERT INTO memory_history (tenant_id, memory_id, agent_id, user_id, key, event, content, tags, metadata, sources, actor, at)
    SELECT tenant_id, id, agent_id, user_id, key, 'created', content, tags, metadata, sources, '{"type":"api"}'::jsonb, created_at FROM memories`);
  await database.db.execute(sql`UPDATE memories SET valid_from = NULL, valid_until = NULL, content = regexp_replace(content, ' reworded$', '')`);
  await new Promise((r) => setTimeout(r, 20));
  const asOf = new Date();
  await new Promise((r) => setTimeout(r, 20));
  const reworded = Array.from({ length: Math.floor(N / 100) }, (_, j) => j * 100 + 7);
  for (const i of reworded) await store.patch(`m${i}`, { agentId: 'bench' }, { content: `memory ${i} reworded` });
  await database.db.execute(sql`UPDATE memories SET valid_until = '2021-01-01T00:00:00Z' WHERE (substr(key, 2)::int % 10) = 5`);
  await database.db.execute(sql`VACUUM ANALYZE memories`);
  await database.db.execute(sql`VACUUM ANALYZE memory_history`);
  const validNow = (i: number) => i % 10 !== 5;
  const rows: Record<string, string>[] = [];
  const cases: [string, SearchMemoriesOptions, (i: number) => boolean][] = [
    ['default (valid now)', {}, validNow],
    ['validAt 2020', { validAt: new Date('2020-06-01T00:00:00Z') }, () => true],
    ['asOf T (1% reworded since)', { asOf }, validNow],
    ['asOf T + validAt 2020', { asOf, validAt: new Date('2020-06-01T00:00:00Z') }, () => true],
  ];
  for (const mode of ['vector', 'hybrid'] as const) {
    for (const [label, options, holds] of cases) {
      const search = (q: number) => store.search(`q${q}`, { agentId: 'bench', topK: TOP_K, mode, ...options });
      for (let w = 0; w < 5; w++) await search(w);
      const times: number[] = [];
      let hits = 0;
      let wanted = 0;
      for (let q = 0; q < queries; q++) {
        const s = performance.now();
        const got = await search(q);
        times.push(performance.now() - s);
        // Recall against the exact top 10 among the memories the moment admits (their vectors are unchanged).
        const want = truth[q]!.filter((key) => holds(Number(key.slice(1))));
        wanted += want.length;
        hits += got.filter((h) => want.includes(h.memory.key)).length;
      }
      rows.push({
        case: `${mode}: ${label}`,
        'p50 ms': pct(times, 50).toFixed(2),
        'p95 ms': pct(times, 95).toFixed(2),
        'recall@10': (hits / wanted).toFixed(3),
      });
      console.log(JSON.stringify(rows[rows.length - 1]));
    }
  }
  return rows;
}

await main();
