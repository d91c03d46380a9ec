/**
 * Ingestion and search through the HTTP API, on each driver, with the configured embedder (default
 * the bundled model in a worker pool sized to the cores):
 *
 *  1. POST /v1/documents for the first BENCH_DOCS SciFact abstracts, BENCH_CONCURRENCY at a time:
 *     documents/s, chunks/s, how busy the main thread was (parsing, chunking, token counting,
 *     HTTP, and with PGlite all SQL) and how many cores the process used. With as many embedding
 *     workers as cores, the work outside the embedder takes CPU from it rather than leaving it idle.
 *  2. The embedder pool alone on the very texts the ingest embedded (title + chunk), in the same
 *     per-document calls and concurrency: the ceiling ingestion is measured against, as chunks/s.
 *     The two alternate, in BENCH_BLOCKS blocks of the corpus (default 10), the pool taking the
 *     first BENCH_POOL_SHARE of each block's documents (default 0.25) right after the block: this
 *     machine's speed drifts by 20% between runs, and the two must see the same machine.
 *  3. POST /v1/search latency (query embedding included) for each mode, one request at a time.
 *
 *   npm run bench:knowledge
 *   BENCH_DRIVERS=pglite,pg BENCH_DOCS=1000 BENCH_QUERIES=200 BENCH_DATABASE_URL=postgres://… npm run bench:knowledge
 *   BENCH_DOCS=all npm run bench:knowledge   # the whole corpus
 */
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { sql } from 'drizzle-orm';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { queryRows } from '../../src/db/query-rows.js';
import { textArray } from '../../src/db/sql-arrays.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { createApp } from '../../src/http/app.js';
import { loadCorpus, loadQueries } from './lib/beir.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';
import { pooled } from './lib/pooled.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');
const dir = resolve(repoRoot, process.env.BEIR_DIR ?? '../shared/datasets/scifact');
const DOCS = process.env.BENCH_DOCS === 'all' ? Infinity : Number(process.env.BENCH_DOCS ?? 500);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 10);
const POOL_SHARE = Number(process.env.BENCH_POOL_SHARE ?? 0.25);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 100);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
const drivers = (process.env.BENCH_DRIVERS ?? (serverUrl ? 'pglite,pg' : 'pglite')).split(',').map((d) => d.trim());

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function benchDriver(driver: string) {
  const server = driver === 'pg' ? await freshServerDatabase(serverUrl, 'memrag_bench_knowledge') : undefined;
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATA_DIR: 'memory://', DATABASE_URL: server?.url });
  const embedder = await createEmbedder(config);
  const ctx = await createAppContext(config, { embedder });
  const listener = serve({ fetch: createApp(ctx).fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((r) => listener.once('listening', () => r()));
  const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<unknown>;
  };

  try {
    const corpus = (await loadCorpus(dir)).filter((d) => d.text.trim() !== '').slice(0, DOCS);
    // One warm-up document, so model loading in the workers is not counted.
    await post('/v1/documents', { title: 'warm-up', text: 'Warm-up document for the embedder workers.', source: 'bench:warm-up' });
    let ingestMs = 0;
    let ingestCpuMs = 0;
    let mainActiveMs = 0;
    let chunkCount = 0;
    let poolMs = 0;
    let poolChunks = 0;
    let poolDocuments = 0;
    const blockSize = Math.ceil(corpus.length / BLOCKS);
    for (let b = 0; b * blockSize < corpus.length; b++) {
      const block = corpus.slice(b * blockSize, (b + 1) * blockSize);
      const eluBefore = performance.eventLoopUtilization();
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      await pooled(block, CONCURRENCY, async (doc) => {
        await post('/v1/documents', { title: doc.title || doc.id, text: doc.text, source: `beir:${doc.id}` });
      });
      ingestMs += performance.now() - started;
      mainActiveMs += performance.eventLoopUtilization(eluBefore).active;
      const cpu = process.cpuUsage(cpuBefore);
      ingestCpuMs += (cpu.user + cpu.system) / 1000;

      // The ceiling, right after the block and so on the machine as it was: the same pool embedding
      // the very texts the ingest embedded (title + chunk), in the same per-document calls.
      const perDocument = await queryRows<{ texts: string[] }>(
        ctx.database.db,
        sql`SELECT array_agg(CASE WHEN c.context = '' THEN c.text ELSE c.context || E'\n\n' || c.text END ORDER BY c.index) AS texts
            FROM chunks c JOIN documents d ON d.id = c.document_id
            WHERE d.source = ANY(${textArray(block.map((doc) => `beir:${doc.id}`))}) GROUP BY c.document_id`,
      );
      chunkCount += perDocument.reduce((n, r) => n + r.texts.length, 0);
      const sample = perDocument.slice(0, Math.ceil(perDocument.length * POOL_SHARE));
      const poolStarted = performance.now();
      await pooled(sample, CONCURRENCY, async (r) => {
        await embedder.embed(r.texts);
      });
      poolMs += performance.now() - poolStarted;
      poolChunks += sample.reduce((n, r) => n + r.texts.length, 0);
      poolDocuments += sample.length;
    }
    const ingestChunksPerSecond = chunkCount / (ingestMs / 1000);
    const poolChunksPerSecond = poolChunks / (poolMs / 1000);

    const queries = (await loadQueries(dir, 'train')).slice(0, QUERIES);
    const latency: Record<string, number[]> = { hybrid: [], vector: [], text: [] };
    for (const mode of Object.keys(latency)) {
      for (const q of queries) {
        const t = performance.now();
        await post('/v1/search', { query: q.text, topK: 10, mode });
        latency[mode]!.push(performance.now() - t);
      }
    }

    return {
      ingest: {
        driver,
        documents: corpus.length,
        chunks: chunkCount,
        'docs/s': (corpus.length / (ingestMs / 1000)).toFixed(1),
        'chunks/s': ingestChunksPerSecond.toFixed(1),
        'pool alone chunks/s': `${poolChunksPerSecond.toFixed(1)} (${poolDocuments} docs)`,
        'vs pool': `${((ingestChunksPerSecond / poolChunksPerSecond) * 100).toFixed(1)}%`,
        'main thread busy': `${((mainActiveMs / ingestMs) * 100).toFixed(1)}%`,
        // All threads of this process (embedding workers included): below the core count, CPU sat idle.
        'cores used': `${(ingestCpuMs / ingestMs).toFixed(2)} of ${os.availableParallelism()}`,
      },
      search: Object.entries(latency).map(([mode, xs]) => ({
        driver,
        mode,
        queries: xs.length,
        'p50 ms': pct(xs, 50).toFixed(1),
        'p95 ms': pct(xs, 95).toFixed(1),
      })),
    };
  } finally {
    await new Promise<void>((r) => listener.close(() => r()));
    await ctx.close();
    await server?.drop();
  }
}

const ingest = [];
const search = [];
console.log(
  `knowledge over HTTP: ${DOCS === Infinity ? 'all' : DOCS} SciFact documents, concurrency ${CONCURRENCY}, ${QUERIES} queries per mode; drivers ${drivers.join(', ')}`,
);
for (const driver of drivers) {
  const result = await benchDriver(driver);
  ingest.push(result.ingest);
  search.push(...result.search);
  console.table([result.ingest]);
}
console.log('\ningestion');
console.table(ingest);
console.log('search latency through HTTP (query embedding included, topK 10, candidateK 50)');
console.table(search);
