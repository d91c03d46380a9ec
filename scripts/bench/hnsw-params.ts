/**
 * What the chunks' HNSW build parameters cost at ingest and what they give at search, on PGlite
 * (whose single-threaded WASM pgvector makes the graph inserts the largest part of an ingest).
 * For each `m:ef_construction` setting: the first BENCH_DOCS SciFact abstracts go through the
 * document store with the model's own vectors from the vector cache (random vectors would make
 * the graph twice as expensive to build), timed per document; then the vector candidates of the
 * first BENCH_QUERIES judged training queries, as `/v1/search` fetches them (its iterative index
 * scan, candidateK of them), are compared with the exact nearest chunks: recall@10 and
 * recall@candidateK.
 *
 *   npm run bench:hnsw
 *   BENCH_HNSW=16:64,12:40,8:32 BENCH_DOCS=2000 BENCH_QUERIES=809 BENCH_CANDIDATE_K=50 npm run bench:hnsw
 *   BENCH_HNSW=16:64 BENCH_EF_SEARCH=200 npm run bench:hnsw   # pgvector's default graph, searched as before
 *
 * The first run embeds the documents and queries with the configured model (minutes with the
 * bundled one); later runs read them from the vector cache.
 */
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { loadConfig } from '../../src/config/config.js';
import { type Db, openDatabase } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { vectorParam } from '../../src/db/sql-arrays.js';
import { VECTOR_TABLES, ensureVectorSpace } from '../../src/db/vector-space.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { createDocumentStore } from '../../src/documents/document-store.js';
import { createDocumentSearch } from '../../src/documents/document-search.js';
import { asWorkerWould } from './lib/as-worker-would.js';
import { loadCorpus, loadQrels, loadQueries } from './lib/beir.js';
import { pooled } from './lib/pooled.js';
import { cachingEmbedder } from './lib/vector-cache.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');
const dir = resolve(repoRoot, process.env.BEIR_DIR ?? '../shared/datasets/scifact');
const DOCS = process.env.BENCH_DOCS === undefined || process.env.BENCH_DOCS === 'all' ? Infinity : Number(process.env.BENCH_DOCS);
const CANDIDATE_K = Number(process.env.BENCH_CANDIDATE_K ?? 50);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 300);
// The search's HNSW candidate list: unset, the knowledge search's own.
const EF_SEARCH = process.env.BENCH_EF_SEARCH ? Number(process.env.BENCH_EF_SEARCH) : undefined;
const settings = (process.env.BENCH_HNSW ?? '16:64,8:64').split(',').map((s) => {
  const [m, efConstruction] = s.split(':').map(Number);
  if (!m || !efConstruction) throw new Error(`BENCH_HNSW: "${s}" is not m:ef_construction`);
  return { m, efConstruction };
});
const NO_TAGS = { tagsAny: [], tagsAll: [], tagsNone: [] };
const log = (message: string) => console.error(message);

/** The exact nearest chunks, by a sequential scan, named as `chunkKeys` names them. */
async function exactNearest(db: Db, vector: number[], k: number): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT set_config('enable_indexscan', 'off', true)`);
    const rows = await queryRows<{ key: string }>(
      tx,
      sql`SELECT d.source || '#' || c.index AS key FROM chunks c JOIN documents d ON d.id = c.document_id
          ORDER BY c.embedding <=> ${vectorParam(vector)}, d.source, c.index LIMIT ${k}`,
    );
    return rows.map((r) => r.key);
  });
}

/** Chunk id → source and index: ids are random, so each database names the same chunk differently. */
async function chunkKeys(db: Db): Promise<Map<string, string>> {
  const rows = await queryRows<{ id: string; key: string }>(
    db,
    sql`SELECT c.id::text AS id, d.source || '#' || c.index AS key FROM chunks c JOIN documents d ON d.id = c.document_id`,
  );
  return new Map(rows.map((r) => [r.id, r.key]));
}

const overlap = (found: readonly string[], exact: readonly string[]) => {
  const want = new Set(exact);
  return found.filter((id) => want.has(id)).length / Math.max(1, exact.length);
};

const corpus = (await loadCorpus(dir)).filter((d) => d.text.trim() !== '').slice(0, DOCS);
const qrels = await loadQrels(dir, 'train');
const queries = (await loadQueries(dir, 'train')).filter((q) => qrels.has(q.id)).slice(0, QUERIES);
const model = cachingEmbedder(await createEmbedder(loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATA_DIR: 'memory://' })));
console.error(`HNSW parameters on PGlite: ${corpus.length} SciFact documents, ${queries.length} training queries, candidateK ${CANDIDATE_K}`);
const rows = [];
let exact: string[][] | undefined;
try {
  const queryVectors = await model.embed(queries.map((q) => q.text));
  // A first pass fills the vector cache, so that no timed ingest embeds.
  const fill = await openDatabase({});
  try {
    const store = createDocumentStore({ db: fill.db, embedder: asWorkerWould(model) });
    await pooled(corpus, CONCURRENCY, (d) => store.ingest({ title: d.title || d.id, content: d.text, format: 'text', source: `beir:${d.id}` }));
  } finally {
    await fill.close();
  }
  log(`  vector cache filled`);
  const misses = model.misses;
  const embedder = asWorkerWould(model);
  for (const hnsw of settings) {
    const database = await openDatabase({});
    try {
      await ensureVectorSpace(
        database.db,
        embedder,
        VECTOR_TABLES.map((t) => (t.table === 'chunks' ? { ...t, hnsw } : t)),
      );
      const store = createDocumentStore({ db: database.db, embedder });
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      await pooled(corpus, CONCURRENCY, (d) => store.ingest({ title: d.title || d.id, content: d.text, format: 'text', source: `beir:${d.id}` }));
      const wallMs = performance.now() - started;
      const cpu = process.cpuUsage(cpuBefore);
      log(`  m ${hnsw.m}, ef_construction ${hnsw.efConstruction}: ingested in ${(wallMs / 1000).toFixed(0)} s`);
      if (model.misses !== misses) throw new Error('a timed ingest embedded texts the first pass did not: its figures include the model');

      const search = createDocumentSearch({ db: database.db, embedder, ...(EF_SEARCH ? { efSearch: EF_SEARCH } : {}) });
      const keyOf = await chunkKeys(database.db);
      // The same for every setting: computed once.
      if (!exact) {
        const t = performance.now();
        exact = [];
        for (const vector of queryVectors) exact.push(await exactNearest(database.db, vector, CANDIDATE_K));
        log(`  exact neighbours of ${exact.length} queries in ${((performance.now() - t) / 1000).toFixed(0)} s`);
      }
      let at10 = 0;
      let atK = 0;
      let searchMs = 0;
      for (const [i, vector] of queryVectors.entries()) {
        const t = performance.now();
        const found = (await search.vectorCandidates(vector, NO_TAGS, CANDIDATE_K)).map((c) => keyOf.get(c.id)!);
        searchMs += performance.now() - t;
        at10 += overlap(found.slice(0, 10), exact[i]!.slice(0, 10));
        atK += overlap(found, exact[i]!);
      }
      const n = queryVectors.length;
      rows.push({
        m: hnsw.m,
        ef_construction: hnsw.efConstruction,
        'ingest wall ms/doc': (wallMs / corpus.length).toFixed(1),
        'ingest CPU ms/doc': ((cpu.user + cpu.system) / 1000 / corpus.length).toFixed(1),
        'recall@10': (at10 / n).toFixed(4),
        [`recall@${CANDIDATE_K}`]: (atK / n).toFixed(4),
        'vector search ms': (searchMs / n).toFixed(1),
      });
      console.table([rows[rows.length - 1]]);
    } finally {
      await database.close();
    }
  }
} finally {
  await model.close();
}
console.table(rows);
