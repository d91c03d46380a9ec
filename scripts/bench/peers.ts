/**
 * memrag's filtered vector search side by side with its peers, on one PostgreSQL server and the
 * same generated data: N clustered 512-d vectors with tags on 10% and 0.2% of the rows.
 *
 *   memrag memories   the memory store's searchByVector (memories table, its HNSW index)
 *   memrag chunks     the document search's vector candidates (chunks table, its m 8 index)
 *   PgVector          @mastra/pg's PgVector, HNSW m 16 / ef_construction 128 like memories (installed
 *                     in scripts/bench/peer-deps by the script's prebench step, see load-pg-vector.ts)
 *   hand-written SQL  one statement on memrag's own memories table and index, with memrag's filter
 *                     (tenant, agent, live rows, tags): ef_search 40 (the issue's anchor) and an
 *                     iterative scan set once per connection, an unnamed statement, the vector bound
 *                     in binary; again at memrag's ef_search (80), the anchor at equal recall
 *   exact scan        the same statement with index scans off (timed on BENCH_EXACT_QUERIES)
 *
 * Rows go in as memrag's production path leaves them: the HNSW index exists first (made by
 * ensureVectorSpace, as at start) and every row is inserted into the graph as it comes, in batches
 * of 500 rows per statement; PgVector's rows go through its own upsert. Queries are interleaved:
 * each query runs on every system in turn, the order rotated per query. A second pass leaves out
 * the full-table scans (PgVector's filtered cases, the exact scan), which evict the others' pages
 * from a small shared_buffers. Then memrag's hybrid search with its BM25 side and fusion timed
 * apart (the query embedding is a lookup here, ~0 ms). PGlite runs the memrag cases at
 * BENCH_PGLITE_N rows.
 *
 *   npm run bench:peers
 *   BENCH_N=20000 BENCH_DRIVERS=pg npm run bench:peers
 *   BENCH_REUSE=1 npm run bench:peers            # keep the server's memrag_peers database if filled
 *   BENCH_REUSE=1 BENCH_HYBRID_ONLY=1 BENCH_DRIVERS=pg npm run bench:peers   # the hybrid split alone
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/db/database.js';
import { DEFAULT_EF_SEARCH } from '../../src/db/filtered-vector-search.js';
import { queryRows } from '../../src/db/query-rows.js';
import { chunks, documents, memories } from '../../src/db/schema/index.js';
import { vectorToBinary } from '../../src/db/vector-wire-format.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createDocumentSearch } from '../../src/documents/document-search.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { MEMORY_CORPUS } from '../../src/memory/memory-corpus.js';
import { indexUnindexedMemories } from '../../src/memory/memory-text-index.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { memoryFilter } from '../../src/memory/memory-corpus.js';
import { getTableColumns } from 'drizzle-orm';
import { normalizeTagFilter } from '../../src/retrieval/filter.js';
import { createRetrievalEngine } from '../../src/retrieval/retrieval-engine.js';
import { rankUnits } from '../../src/retrieval/rank-units.js';
import { fusionWeightsFor } from '../../src/retrieval/fusion-weights.js';
import { hybridCandidates } from '../../src/retrieval/hybrid-candidates.js';
import { loadPgVector } from './lib/load-pg-vector.js';
import { type ClusteredSet, TAG_CASES, type TagCase, clusteredSet, exactTopK, percentile } from './lib/clustered-set.js';

const N = Number(process.env.BENCH_N ?? 100_000);
const PGLITE_N = Number(process.env.BENCH_PGLITE_N ?? Math.min(N, 10_000));
const QUERIES = Number(process.env.BENCH_QUERIES ?? 100);
const EXACT_QUERIES = Number(process.env.BENCH_EXACT_QUERIES ?? 10);
const TOP_K = 10;
const DIMS = 512;
const drivers = (process.env.BENCH_DRIVERS ?? 'pg,pglite').split(',');
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/memrag_test';
const reuse = process.env.BENCH_REUSE === '1';
// BENCH_HYBRID_ONLY=1: the hybrid search's split alone (with BENCH_REUSE, on rows already there).
const hybridOnly = process.env.BENCH_HYBRID_ONLY === '1';
const MASTRA_INDEX = 'peers_bench';
const HAND_EF_SEARCH = 40;
const log = (m: string) => console.error(m);

/** One system's search: the generated row numbers of its top 10 for query q. */
interface System {
  name: string;
  search(q: number, c: TagCase): Promise<number[]>;
  /** Leaves a case out (the full-table scans of the second pass). */
  skip?(c: TagCase, pass: number): boolean;
  queries?: number;
}

// Every statement the pg driver sends while `captured` is set: the SQL each system runs, to print and explain.
let captured: { text: string; values?: unknown[] }[] | null = null;
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (captured) {
    const [first, second] = args as [string | { text: string; values?: unknown[] }, unknown];
    if (typeof first === 'string') captured.push({ text: first, ...(Array.isArray(second) ? { values: second } : {}) });
    else if (first && typeof first === 'object' && 'text' in first) {
      const values = first.values ?? (Array.isArray(second) ? second : undefined);
      captured.push({ text: first.text, ...(values ? { values } : {}) });
    }
  }
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

const isRanked = (text: string) => text.includes('<=>') && /^\s*(select|with|explain)/i.test(text.split(';').pop()!.trim() || text);

/** Replays one captured search in a transaction, the ranked statements under EXPLAIN ANALYZE. */
async function explain(pool: pg.Pool, statements: { text: string; values?: unknown[] }[]): Promise<string> {
  const client = await pool.connect();
  const out: string[] = [];
  try {
    await client.query('BEGIN');
    for (const s of statements) {
      if (/^\s*(begin|commit|rollback)\s*$/i.test(s.text)) continue;
      const parts = s.values ? [s.text] : s.text.split(/;\s*(?=\S)/);
      for (const [i, text] of parts.entries()) {
        const last = i === parts.length - 1;
        out.push(`  SQL: ${text.replace(/\s+/g, ' ').trim().slice(0, 900)}`);
        if (isRanked(text) && last) {
          const plan = await client.query({ text: `EXPLAIN (ANALYZE, COSTS OFF, BUFFERS OFF) ${text}`, ...(s.values ? { values: s.values } : {}) });
          out.push(...plan.rows.map((r: Record<string, string>) => `    ${r['QUERY PLAN']}`));
        } else {
          await client.query(s.values ? { text, values: s.values } : text);
        }
      }
    }
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    client.release();
  }
  return out.join('\n');
}

async function openFresh(name: string): Promise<{ url: string; filled: boolean }> {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  if (reuse) {
    const probe = new pg.Client({ connectionString: url.toString() });
    const n = await probe
      .connect()
      .then(() =>
        probe.query(
          `SELECT (SELECT count(*) FROM memories)::int AS m, (SELECT count(*) FROM chunks)::int AS c, (SELECT count(*) FROM ${MASTRA_INDEX})::int AS v`,
        ),
      )
      .then((r) => r.rows[0] as { m: number; c: number; v: number })
      .catch(() => null);
    await probe.end().catch(() => {});
    if (n && n.m === N && n.c === N && n.v === N) return { url: url.toString(), filled: true };
  }
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return { url: url.toString(), filled: false };
}

function benchEmbedder(set: ClusteredSet): Embedder {
  const byText = new Map(Array.from({ length: set.queries }, (_, q) => [set.queryText(q), set.query(q)]));
  return {
    id: `bench:clustered-${DIMS}`,
    dimensions: DIMS,
    maxInputTokens: 512,
    embed: async (texts) => texts.map((t) => byText.get(t) ?? set.query(0)),
    close: async () => {},
  };
}

/** Rows in as memrag's production path leaves them: the index exists, each row goes into the graph. */
async function fillMemrag(database: Database, set: ClusteredSet, rows: number): Promise<{ memories: number; chunks: number }> {
  const batch = 500;
  let t0 = performance.now();
  for (let start = 0; start < rows; start += batch) {
    const values = [];
    for (let i = start; i < Math.min(rows, start + batch); i++) {
      values.push({ agentId: 'bench', key: `m${i}`, content: set.text(i), tags: set.tags(i), embedding: set.row(i) });
    }
    await database.db.insert(memories).values(values);
    if (start % 20_000 === 0) log(`  memories ${start}/${rows}`);
  }
  const memoriesPerSecond = rows / ((performance.now() - t0) / 1000);
  // The BM25 postings as the server's start adds them to rows saved without (its bulk path).
  await indexUnindexedMemories(database.db, { batchSize: 2000 });
  t0 = performance.now();
  const [doc] = await database.db
    .insert(documents)
    .values({ title: 'bench', contentHash: randomUUID(), format: 'text', text: '' })
    .returning({ id: documents.id });
  for (let start = 0; start < rows; start += batch) {
    const values = [];
    for (let i = start; i < Math.min(rows, start + batch); i++) {
      const id = randomUUID();
      values.push({
        id,
        passageId: id,
        documentId: doc!.id,
        index: i,
        text: set.text(i),
        start: 0,
        end: 0,
        tokenCount: 12,
        tags: set.tags(i),
        embedding: set.row(i),
      });
    }
    await database.db.insert(chunks).values(values);
    if (start % 20_000 === 0) log(`  chunks ${start}/${rows}`);
  }
  const chunksPerSecond = rows / ((performance.now() - t0) / 1000);
  return { memories: memoriesPerSecond, chunks: chunksPerSecond };
}

async function chunkIndexOf(database: Database): Promise<Map<string, number>> {
  const rows = await queryRows<{ id: string; index: number }>(database.db, sql`SELECT id::text, index FROM chunks`);
  return new Map(rows.map((r) => [r.id, Number(r.index)]));
}

const HAND_SQL = (tagged: boolean) => `SELECT key FROM memories
  WHERE tenant_id = $1 AND agent_id = $2 AND valid_to IS NULL AND (expires_at IS NULL OR expires_at > now())${tagged ? ' AND tags && $4::text[]' : ''}
  ORDER BY embedding <=> $3::vector LIMIT ${TOP_K}`;

const rowOfKey = (key: string) => Number(key.slice(1));

// The columns the memory store's hits carry, as its vector side fetches them.
const { embedding: _e, id: _i, bm25Length: _b, tenantId: _t, ...MEMORY_PAYLOAD } = getTableColumns(memories);

async function measure(
  systems: System[],
  set: ClusteredSet,
  rows: number,
  passes: number,
  results: Record<string, string | number>[],
  driver: string,
  insert: Record<string, string>,
) {
  const truth = new Map(TAG_CASES.map((c) => [c.label, Array.from({ length: set.queries }, (_, q) => exactTopK(set, q, rows, c.matches, TOP_K))]));
  for (let pass = 1; pass <= passes; pass++) {
    for (const c of TAG_CASES) {
      const active = systems.filter((s) => !s.skip?.(c, pass));
      for (const s of active) for (let w = 0; w < 3; w++) await s.search(w, c);
      const times = new Map(active.map((s) => [s.name, [] as number[]]));
      const hits = new Map(active.map((s) => [s.name, { hit: 0, rows: 0, n: 0 }]));
      for (let q = 0; q < set.queries; q++) {
        for (let k = 0; k < active.length; k++) {
          const s = active[(q + k) % active.length]!;
          if (q >= (s.queries ?? set.queries)) continue;
          const t = performance.now();
          const got = await s.search(q, c);
          times.get(s.name)!.push(performance.now() - t);
          const want = new Set(truth.get(c.label)![q]!);
          const h = hits.get(s.name)!;
          h.hit += got.filter((i) => want.has(i)).length;
          h.rows += got.length;
          h.n += 1;
        }
      }
      for (const s of active) {
        const t = times.get(s.name)!;
        const h = hits.get(s.name)!;
        const r = {
          driver,
          pass,
          case: c.label,
          system: s.name,
          'p50 ms': +percentile(t, 50).toFixed(2),
          'p95 ms': +percentile(t, 95).toFixed(2),
          'recall@10': +(h.hit / (h.n * TOP_K)).toFixed(3),
          'rows/query': +(h.rows / h.n).toFixed(1),
          'insert rows/s': insert[s.name] ?? '',
        };
        results.push(r);
        log(JSON.stringify(r));
      }
    }
  }
}

function ratios(results: Record<string, string | number>[]) {
  const out: Record<string, string>[] = [];
  for (const r of results) {
    if (!String(r.system).startsWith('memrag')) continue;
    const at = (name: string) => results.find((x) => x.driver === r.driver && x.pass === r.pass && x.case === r.case && x.system === name);
    const hand = at('hand-written SQL');
    const handEqual = at(`hand-written SQL, ef_search ${DEFAULT_EF_SEARCH}`);
    const mastra = at('PgVector');
    out.push({
      driver: String(r.driver),
      pass: String(r.pass),
      case: String(r.case),
      system: String(r.system),
      'p50 / hand-written': hand ? (Number(r['p50 ms']) / Number(hand['p50 ms'])).toFixed(2) : '',
      [`p50 / hand-written ef ${DEFAULT_EF_SEARCH}`]: handEqual ? (Number(r['p50 ms']) / Number(handEqual['p50 ms'])).toFixed(2) : '',
      'PgVector p50 / this': mastra ? (Number(mastra['p50 ms']) / Number(r['p50 ms'])).toFixed(1) : '',
    });
  }
  return out;
}

async function hybrid(database: Database, set: ClusteredSet, driver: string): Promise<Record<string, string | number>[]> {
  const embedder = benchEmbedder(set);
  const store = createPgMemoryStore({ db: database.db, embedder });
  const engine = createRetrievalEngine({ db: database.db, embedder });
  const weights = fusionWeightsFor(embedder.id);
  const candidateK = hybridCandidates(TOP_K);
  const out: Record<string, string | number>[] = [];
  for (const c of TAG_CASES) {
    const filter = memoryFilter('default', { agentId: 'bench', ...(c.tag ? { tagsAny: [c.tag] } : {}) });
    const parts = { hybrid: [] as number[], vector: [] as number[], bm25: [] as number[], fusion: [] as number[], embed: [] as number[] };
    for (let q = -3; q < set.queries; q++) {
      const text = set.queryText(Math.max(q, 0));
      let t = performance.now();
      const vector = await engine.embedQuery(text);
      const embedMs = performance.now() - t;
      // Rotated, so that no part always finds the query's postings and graph pages warm.
      let hybridMs = 0;
      let vectorMs = 0;
      let bm25Ms = 0;
      let fusionMs = 0;
      let v: Awaited<ReturnType<typeof engine.vectorCandidates>> = [];
      let b: Awaited<ReturnType<typeof engine.textCandidates>> = [];
      const steps = [
        async () => {
          const t0 = performance.now();
          await store.search(text, { agentId: 'bench', topK: TOP_K, mode: 'hybrid', ...(c.tag ? { tagsAny: [c.tag] } : {}) });
          hybridMs = performance.now() - t0;
        },
        async () => {
          const t0 = performance.now();
          v = await engine.vectorCandidates(MEMORY_CORPUS, vector, filter, candidateK, MEMORY_PAYLOAD, false);
          vectorMs = performance.now() - t0;
        },
        async () => {
          const t0 = performance.now();
          b = await engine.textCandidates(MEMORY_CORPUS, text, filter, candidateK);
          bm25Ms = performance.now() - t0;
        },
      ];
      for (let k = 0; k < steps.length; k++) await steps[(q + 3 + k) % steps.length]!();
      t = performance.now();
      rankUnits('hybrid', v, b, weights);
      fusionMs = performance.now() - t;
      if (q < 0) continue;
      parts.hybrid.push(hybridMs - embedMs);
      parts.vector.push(vectorMs);
      parts.bm25.push(bm25Ms);
      parts.fusion.push(fusionMs);
      parts.embed.push(embedMs);
    }
    const r = {
      driver,
      case: c.label,
      'hybrid p50 ms': +percentile(parts.hybrid, 50).toFixed(2),
      'hybrid p95 ms': +percentile(parts.hybrid, 95).toFixed(2),
      'vector side p50': +percentile(parts.vector, 50).toFixed(2),
      'BM25 side p50': +percentile(parts.bm25, 50).toFixed(2),
      'fusion p50': +percentile(parts.fusion, 50).toFixed(3),
      'embed p50 (apart)': +percentile(parts.embed, 50).toFixed(3),
    };
    out.push(r);
    log(JSON.stringify(r));
  }
  return out;
}

async function printPlans(title: string, pool: pg.Pool, run: (c: TagCase) => Promise<unknown>) {
  for (const c of TAG_CASES) {
    captured = [];
    await run(c);
    const statements = captured;
    captured = null;
    console.log(`\n--- ${title}, ${c.label}: ${statements.length} statements per search`);
    console.log(await explain(pool, statements));
  }
}

async function serverRun(set: ClusteredSet, results: Record<string, string | number>[], hybrids: Record<string, string | number>[]) {
  const { url, filled } = await openFresh(process.env.BENCH_DB ?? 'memrag_peers');
  const database = await openDatabase({ url });
  const embedder = benchEmbedder(set);
  await ensureVectorSpace(database.db, embedder);
  const PgVector = await loadPgVector();
  const mastra = new PgVector({ id: 'peers', connectionString: url });
  const insert: Record<string, string> = {};
  if (!filled) {
    log(`filling memrag (${N} memories, ${N} chunks)`);
    const rates = await fillMemrag(database, set, N);
    insert['memrag memories'] = rates.memories.toFixed(0);
    insert['memrag chunks'] = rates.chunks.toFixed(0);
    log(`filling PgVector`);
    await mastra.createIndex({
      indexName: MASTRA_INDEX,
      dimension: DIMS,
      metric: 'cosine',
      indexConfig: { type: 'hnsw', hnsw: { m: 16, efConstruction: 128 } },
    });
    const t0 = performance.now();
    for (let start = 0; start < N; start += 500) {
      const ids: string[] = [];
      const vectors: number[][] = [];
      const metadata: Record<string, unknown>[] = [];
      for (let i = start; i < Math.min(N, start + 500); i++) {
        ids.push(`m${i}`);
        vectors.push(set.row(i));
        metadata.push({ tags: set.tags(i) });
      }
      await mastra.upsert({ indexName: MASTRA_INDEX, ids, vectors, metadata });
    }
    insert.PgVector = (N / ((performance.now() - t0) / 1000)).toFixed(0);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    for (const t of ['memories', 'chunks', MASTRA_INDEX]) await admin.query(`VACUUM ANALYZE ${t}`);
    await admin.end();
  }
  const chunkIndex = await chunkIndexOf(database);
  const store = createPgMemoryStore({ db: database.db, embedder });
  const docs = createDocumentSearch({ db: database.db, embedder });
  const hand = new pg.Pool({ connectionString: url, max: 10 });
  // Per connection, once: the settings never change between these searches.
  hand.on('connect', (client) => {
    void client.query(`SET hnsw.ef_search = ${HAND_EF_SEARCH}; SET hnsw.iterative_scan = relaxed_order`);
  });
  // The same statement at memrag's own candidate list: the anchor at equal recall.
  const handEqual = new pg.Pool({ connectionString: url, max: 10 });
  handEqual.on('connect', (client) => {
    void client.query(`SET hnsw.ef_search = ${DEFAULT_EF_SEARCH}; SET hnsw.iterative_scan = relaxed_order`);
  });
  const exact = new pg.Pool({ connectionString: url, max: 2 });
  exact.on('connect', (client) => {
    void client.query(`SET enable_indexscan = off`);
  });
  const handSearch = (pool: pg.Pool) => async (q: number, c: TagCase) => {
    const values: unknown[] = ['default', 'bench', vectorToBinary(set.query(q))];
    if (c.tag) values.push(`{${c.tag}}`);
    const r = await pool.query<{ key: string }>({ text: HAND_SQL(c.tag !== null), values });
    return r.rows.map((x) => rowOfKey(x.key));
  };
  const systems: System[] = [
    {
      name: 'memrag memories',
      search: async (q, c) =>
        (await store.searchByVector(set.query(q), { agentId: 'bench', topK: TOP_K, ...(c.tag ? { tagsAny: [c.tag] } : {}) })).map((h) =>
          rowOfKey(h.memory.key),
        ),
    },
    {
      name: 'memrag chunks',
      search: async (q, c) =>
        (await docs.vectorCandidates(set.query(q), normalizeTagFilter(c.tag ? { tagsAny: [c.tag] } : {}), TOP_K)).map((h) => chunkIndex.get(h.id)!),
    },
    {
      name: 'PgVector',
      search: async (q, c) =>
        (await mastra.query({ indexName: MASTRA_INDEX, queryVector: set.query(q), topK: TOP_K, ...(c.tag ? { filter: { tags: { $in: [c.tag] } } } : {}) })).map(
          (h) => rowOfKey(h.id),
        ),
      skip: (c, pass) => pass === 2 && c.tag !== null,
    },
    { name: 'hand-written SQL', search: handSearch(hand) },
    { name: `hand-written SQL, ef_search ${DEFAULT_EF_SEARCH}`, search: handSearch(handEqual) },
    { name: 'exact scan', search: handSearch(exact), skip: (_c, pass) => pass === 2, queries: EXACT_QUERIES },
  ];
  if (!hybridOnly) {
    log('measuring (pass 1: all; pass 2: without the full-table scans)');
    await measure(systems, set, N, 2, results, 'pg', insert);
  }
  hybrids.push(...(await hybrid(database, set, 'pg')));
  if (!hybridOnly) for (const s of systems) await printPlans(s.name, s.name === 'exact scan' ? exact : hand, (c) => s.search(0, c));
  await hand.end();
  await handEqual.end();
  await exact.end();
  await mastra.disconnect();
  await database.close();
}

async function pgliteRun(set: ClusteredSet, results: Record<string, string | number>[], hybrids: Record<string, string | number>[]) {
  const database = await openDatabase({});
  const embedder = benchEmbedder(set);
  await ensureVectorSpace(database.db, embedder);
  log(`filling PGlite (${PGLITE_N} memories, ${PGLITE_N} chunks)`);
  const rates = await fillMemrag(database, set, PGLITE_N);
  await database.db.execute(sql`VACUUM ANALYZE`);
  const chunkIndex = await chunkIndexOf(database);
  const store = createPgMemoryStore({ db: database.db, embedder });
  const docs = createDocumentSearch({ db: database.db, embedder });
  const systems: System[] = [
    {
      name: 'memrag memories',
      search: async (q, c) =>
        (await store.searchByVector(set.query(q), { agentId: 'bench', topK: TOP_K, ...(c.tag ? { tagsAny: [c.tag] } : {}) })).map((h) =>
          rowOfKey(h.memory.key),
        ),
    },
    {
      name: 'memrag chunks',
      search: async (q, c) =>
        (await docs.vectorCandidates(set.query(q), normalizeTagFilter(c.tag ? { tagsAny: [c.tag] } : {}), TOP_K)).map((h) => chunkIndex.get(h.id)!),
    },
  ];
  await measure(systems, set, PGLITE_N, 1, results, 'pglite', { 'memrag memories': rates.memories.toFixed(0), 'memrag chunks': rates.chunks.toFixed(0) });
  hybrids.push(...(await hybrid(database, set, 'pglite')));
  await database.close();
}

async function main() {
  console.log(`peers bench: ${N} rows on the server (${PGLITE_N} on PGlite), ${DIMS} dims, ${QUERIES} queries per case, topK ${TOP_K}`);
  const set = clusteredSet(Math.max(N, PGLITE_N), QUERIES, DIMS);
  const results: Record<string, string | number>[] = [];
  const hybrids: Record<string, string | number>[] = [];
  if (drivers.includes('pg')) await serverRun(set, results, hybrids);
  if (drivers.includes('pglite')) await pgliteRun(set, results, hybrids);
  console.log('\nsearch, p50/p95 ms, recall@10 against the exact top 10, rows returned per query');
  console.table(results);
  console.log('\nratios (p50)');
  console.table(ratios(results));
  console.log('\nhybrid search (memories), query embedding excluded and reported apart');
  console.table(hybrids);
}

await main();
