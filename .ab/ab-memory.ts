/**
 * Memory search at scale on hand-made clustered vectors, on PGlite and/or a PostgreSQL server.
 * Prints insert rate, search p50/p95 (no filter, a 10% tag, a 0.2% tag), recall@10 against an
 * exact scan, and the rows returned for the rare tag.
 *
 *   npm run bench:memory                      # both drivers (pg via BENCH_DATABASE_URL or TEST_DATABASE_URL)
 *   BENCH_N=20000 BENCH_DRIVERS=pglite npm run bench:memory
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { openDatabase, type Database } from '/work/wt-retrieval/src/db/database.js';
import { memories } from '/work/wt-retrieval/src/db/schema.js';
import { ensureVectorSpace } from '/work/wt-retrieval/src/db/vector-space.js';
import type { Embedder } from '/work/wt-retrieval/src/embeddings/embedder.js';
import { createPgMemoryStore } from '/work/wt-retrieval/src/memory/pg-memory-store.js';
import { createPgMemoryStore as createOldStore } from '/work/main/src/memory/pg-memory-store.ts';
import { seededRandom } from '/work/wt-retrieval/testkit/vector-fixtures.js';

const N = Number(process.env.BENCH_N ?? 100_000);
const DIMS = Number(process.env.BENCH_DIMS ?? 512);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 100);
const TOP_K = 10;
const drivers = (process.env.BENCH_DRIVERS ?? 'pglite,pg').split(',');
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;

/** Clustered unit vectors in one flat Float32Array: real embeddings cluster by topic. */
function makeVectors(count: number, seed: number, clusters = 200): Float32Array {
  const rand = seededRandom(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: DIMS }, gauss));
  const out = new Float32Array(count * DIMS);
  for (let i = 0; i < count; i++) {
    const c = centres[Math.floor(rand() * clusters)]!;
    const cn = Math.hypot(...c);
    let norm = 0;
    for (let d = 0; d < DIMS; d++) {
      const x = c[d]! / cn + gauss() * 0.6 / Math.sqrt(DIMS);
      out[i * DIMS + d] = x;
      norm += x * x;
    }
    norm = Math.sqrt(norm);
    for (let d = 0; d < DIMS; d++) out[i * DIMS + d]! /= norm;
  }
  return out;
}

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
    const rows = await probe.connect().then(() => probe.query('SELECT count(*)::int AS n FROM memories')).catch(() => null);
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
  const all = makeVectors(N + QUERIES, 1);
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
    embed: async (texts) => texts.map((t) => byText.get(t)!),
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
    const stores = { before: createOldStore({ db: database.db as never, embedder }), after: createPgMemoryStore({ db: database.db, embedder }) };
    for (const mode of ['vector', 'hybrid'] as const)
    for (const [label, filter, want] of [
      ['no filter', {}, truth.none],
      ['10% tag', { tagsAny: ['common'] }, truth.common],
      ['0.2% tag', { tagsAny: ['rare'] }, truth.rare],
    ] as const) {
      for (const store of Object.values(stores)) for (let w = 0; w < 5; w++) await store.search(`q${w}`, { agentId: 'bench', topK: TOP_K, mode, ...filter });
      const times = { before: [] as number[], after: [] as number[] };
      const hits = { before: 0, after: 0 };
      for (let q = 0; q < QUERIES; q++) {
        // Interleaved, alternating which goes first.
        const order = q % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
        for (const name of order) {
          const s = performance.now();
          const got = await stores[name].search(`q${q}`, { agentId: 'bench', topK: TOP_K, mode, ...filter });
          times[name].push(performance.now() - s);
          hits[name] += got.filter((h) => want[q]!.includes(h.memory.key)).length;
        }
      }
      for (const name of ['before', 'after'] as const) {
        results.push({ driver, mode, case: label, code: name, 'p50 ms': pct(times[name], 50).toFixed(2), 'p95 ms': pct(times[name], 95).toFixed(2), 'recall@10': (hits[name] / (QUERIES * TOP_K)).toFixed(3) });
        console.log(JSON.stringify(results[results.length - 1]));
      }
    }
    await database.close();
  }
  console.table(results);
}

await main();
