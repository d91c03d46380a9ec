/**
 * What ingesting a document costs besides embedding it, per driver: the document store's whole
 * ingest (parsing, chunking with exact token counts, BM25 terms, and the transaction with its
 * HNSW inserts) with the embedder's vectors served from the vector cache, so that only this work
 * is timed. The vectors are the model's own: random ones would make the HNSW inserts about twice
 * as expensive as real, clustered embeddings do. The first run embeds the documents with the
 * configured model (minutes with the bundled one), later runs read them from the cache.
 *
 * With as many embedding workers as cores, this is the work that takes CPU from the embedder:
 * ingestion reaches the pool's own throughput times embed / (embed + this), embed being the
 * model's CPU time per document. Prints, per document: wall time, this process's CPU, and for a
 * server on this machine its processes' CPU (read from /proc: Linux only).
 *
 *   npm run bench:ingest-cost
 *   BENCH_DOCS=5183 BENCH_DRIVERS=pglite,pg BENCH_DATABASE_URL=postgres://… npm run bench:ingest-cost
 */
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/config.js';
import { openDatabase } from '../../src/db/database.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { type DocumentStore, createDocumentStore } from '../../src/documents/document-store.js';
import { asWorkerWould } from './lib/as-worker-would.js';
import { type BeirDocument, loadCorpus } from './lib/beir.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';
import { pooled } from './lib/pooled.js';
import { cachingEmbedder } from './lib/vector-cache.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');
const dir = resolve(repoRoot, process.env.BEIR_DIR ?? '../shared/datasets/scifact');
const DOCS = Number(process.env.BENCH_DOCS ?? 1000);
const WARM_UP_DOCS = 100;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const drivers = (process.env.BENCH_DRIVERS ?? (serverUrl ? 'pglite,pg' : 'pglite')).split(',').map((d) => d.trim());

/** CPU time of the PostgreSQL server's processes on this machine, in ms. */
function serverCpuMs(): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.includes('(postgres)')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended while we looked.
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux.
}

const ingestDocument = (store: DocumentStore, d: BeirDocument) =>
  store.ingest({ title: d.title || d.id, content: d.text, format: 'text', source: `beir:${d.id}` });

async function ingestAll(embedder: Embedder, url: string | undefined, docs: readonly BeirDocument[], warmUp: readonly BeirDocument[]) {
  const database = await openDatabase({ ...(url ? { url } : {}) });
  try {
    await ensureVectorSpace(database.db, embedder);
    const store = createDocumentStore({ db: database.db, embedder });
    for (const d of warmUp) await ingestDocument(store, d);

    const serverBefore = url ? serverCpuMs() : 0;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    await pooled(docs, CONCURRENCY, (d) => ingestDocument(store, d));
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const serverMs = url ? serverCpuMs() - serverBefore : 0;
    const perDoc = (ms: number) => (ms / docs.length).toFixed(1);
    return {
      driver: database.driver,
      documents: docs.length,
      'wall ms/doc': perDoc(wallMs),
      'this process CPU ms/doc': perDoc((cpu.user + cpu.system) / 1000),
      'server CPU ms/doc': url ? perDoc(serverMs) : '-',
    };
  } finally {
    await database.close();
  }
}

const corpus = (await loadCorpus(dir)).filter((d) => d.text.trim() !== '');
const docs = corpus.slice(0, DOCS);
const warmUp = corpus.slice(DOCS, DOCS + WARM_UP_DOCS);
const model = cachingEmbedder(await createEmbedder(loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATA_DIR: 'memory://' })));
console.error(
  `ingest cost without the embedder: ${docs.length} SciFact documents (after ${warmUp.length} to warm up), concurrency ${CONCURRENCY}; drivers ${drivers.join(', ')}`,
);
const rows = [];
try {
  // A first pass fills the vector cache (in memory, no vector index), so that no measured run embeds.
  const fill = await openDatabase({});
  try {
    const store = createDocumentStore({ db: fill.db, embedder: asWorkerWould(model) });
    for (const d of [...warmUp, ...docs]) await ingestDocument(store, d);
  } finally {
    await fill.close();
  }
  const misses = model.misses;
  for (const driver of drivers) {
    const server = driver === 'pg' ? await freshServerDatabase(serverUrl, 'memrag_bench_ingest_cost') : undefined;
    try {
      rows.push(await ingestAll(asWorkerWould(model), server?.url, docs, warmUp));
      if (model.misses !== misses) throw new Error('a measured run embedded texts the first pass did not: its figures include the model');
    } finally {
      await server?.drop();
    }
  }
} finally {
  await model.close();
}
console.table(rows);
