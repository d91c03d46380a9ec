/**
 * Durable jobs (issue 16), four measurements; BENCH_PARTS picks some (default all):
 *
 *  queue       Per-job cost of the queue itself (enqueue, claim, complete in a transaction, an
 *              instant handler, one consumer): the hand-written SKIP LOCKED table against pg-boss 10
 *              (the newest pg-boss that runs on Node 20), alternating blocks on the PostgreSQL
 *              server; the hand-written one on PGlite too, and whether pg-boss starts on PGlite.
 *  pipeline    Queue overhead per ingested document: the same documents through the ingest
 *              pipeline directly and as jobs through the runner, with an instant embedder, PGlite
 *              and the server.
 *  throughput  End-to-end ingestion of SciFact abstracts on the server with the bundled embedder:
 *              one worker process (`src/worker-main.ts`, one embedding thread) against two (one
 *              thread each), and the embedder pool alone (one thread, two threads) embedding the very
 *              chunk texts the workers embedded. Alternating blocks; the second worker process is
 *              paused (SIGSTOP, while the queue is empty) for the one-worker blocks.
 *  latency     `npm start` as it comes (PGlite, in-process workers, bundled embedder): time from the
 *              202 of an async POST /v1/documents to the abstract being found by BM25 and by vector.
 *
 * The figures docs/benchmarks/jobs.md quotes are from runs of `npm run bench:jobs` with the server set:
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:jobs
 *   BENCH_PARTS=queue BENCH_JOBS=300 BENCH_BLOCKS=4 …    BENCH_DOCS=16 (per throughput block) BENCH_LATENCY_RUNS=5
 */
import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { type Database, openDatabase } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { textArray } from '../../src/db/sql-arrays.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createIngestPipeline } from '../../src/documents/ingest/ingest-pipeline.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { createApp } from '../../src/http/app.js';
import { ingestJobHandler } from '../../src/jobs/ingest-job.js';
import { createJobLeases } from '../../src/jobs/job-leases.js';
import { startJobRunner } from '../../src/jobs/job-runner.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import { createLogger } from '../../src/observability/logger.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { loadCorpus } from './lib/beir.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';
import { pooled } from './lib/pooled.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../../..');
const N = Number(process.env.BENCH_JOBS ?? 200);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4);
const DOCS_PER_BLOCK = Number(process.env.BENCH_DOCS ?? 16);
const THROUGHPUT_BLOCKS = Number(process.env.BENCH_THROUGHPUT_BLOCKS ?? 2);
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS ?? 5);
const serverUrl = process.env.BENCH_DATABASE_URL;
const parts = new Set((process.env.BENCH_PARTS ?? 'queue,pipeline,throughput,latency').split(',').map((p) => p.trim()));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[], digits = 2) => xs.map((x) => x.toFixed(digits)).join(', ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const summary: Record<string, number> = {};

console.log(
  `machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} at the start`,
);

// ---------------------------------------------------------------------------------------------
// queue: hand-written against pg-boss
// ---------------------------------------------------------------------------------------------

async function handWritten(database: Database, block: string): Promise<number> {
  const store = createJobStore({ db: database.db, tenantId: `hand-${block}` });
  const queue = createJobLeases(database.db);
  const started = performance.now();
  for (let i = 0; i < N; i++) await store.enqueue('ingest', { payload: { i } });
  let done = 0;
  for (;;) {
    const job = await queue.claim('bench', 30_000);
    if (!job) break;
    await database.db.transaction((tx) => queue.complete(tx, job, 'bench', {}));
    done++;
  }
  if (done !== N) throw new Error(`hand-written: ${done} of ${N} jobs done`);
  return (performance.now() - started) / N;
}

type ExecuteSql = (text: string, values: unknown[]) => Promise<{ rows: unknown[] }>;

async function pgBoss(boss: PgBoss, inTransaction: (work: (executeSql: ExecuteSql) => Promise<void>) => Promise<void>, block: string): Promise<number> {
  const name = `bench-${block}`;
  await boss.createQueue(name);
  const started = performance.now();
  for (let i = 0; i < N; i++) await boss.send(name, { i });
  let done = 0;
  for (;;) {
    const [job] = await boss.fetch<{ i: number }>(name);
    if (!job) break;
    // Completed in a transaction of the caller's, as the ingest job's effect and its `succeeded` must be.
    await inTransaction((executeSql) => boss.complete(name, job.id, {}, { db: { executeSql } }));
    done++;
  }
  if (done !== N) throw new Error(`pg-boss: ${done} of ${N} jobs done`);
  return (performance.now() - started) / N;
}

/** pg-boss on PGlite: it cannot open a connection of its own there, only go through its `db` adapter. */
function pgliteAdapter(lite: Pick<PGlite, 'query' | 'exec'>): ExecuteSql {
  // Its migrations are several statements in one string, without parameters: `exec` takes those.
  return async (text, values) => (values && values.length > 0 ? lite.query(text, values) : ((await lite.exec(text)).at(-1) ?? { rows: [] }));
}

async function benchQueue(): Promise<void> {
  if (serverUrl) {
    const server = await freshServerDatabase(serverUrl, 'memrag_bench_jobs_queue');
    const database = await openDatabase({ url: server.url });
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    // Maintenance and cron off: only the queue's own statements are measured.
    const boss = new PgBoss({ connectionString: server.url, max: 4, supervise: false, schedule: false });
    boss.on('error', (err) => console.error('pg-boss:', err));
    await boss.start();
    const hand: number[] = [];
    const boss10: number[] = [];
    const inTransaction = async (work: (executeSql: ExecuteSql) => Promise<void>) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await work((text, values) => client.query(text, values));
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      } finally {
        client.release();
      }
    };
    for (let b = 0; b < BLOCKS; b++) {
      hand.push(await handWritten(database, `${b}`));
      boss10.push(await pgBoss(boss, inTransaction, `${b}`));
    }
    await boss.stop({ graceful: false, wait: true });
    await pool.end();
    await database.close();
    await server.drop();
    console.log(`queue, PostgreSQL server: ${N} jobs x ${BLOCKS} alternating blocks, enqueue + claim + complete in a transaction, one consumer`);
    console.log(`  hand-written SKIP LOCKED: ${median(hand).toFixed(2)} ms/job   (blocks: ${fmt(hand)})`);
    console.log(`  pg-boss 10:               ${median(boss10).toFixed(2)} ms/job   (blocks: ${fmt(boss10)})`);
    console.log(`  pg-boss / hand-written:   ${(median(boss10) / median(hand)).toFixed(2)}x`);
    summary.handServerMs = median(hand);
    summary.bossServerMs = median(boss10);
  }
  // PGlite: the hand-written queue through the app's database, pg-boss through its adapter on a
  // PGlite of its own (both in this process, one after the other).
  const pglite = await openDatabase({});
  const lite = await PGlite.create();
  const boss = new PgBoss({ db: { executeSql: pgliteAdapter(lite) }, supervise: false, schedule: false });
  let bossError: string | undefined;
  boss.on('error', (err: Error) => (bossError ??= err.message));
  const hand: number[] = [];
  const boss10: number[] = [];
  try {
    await boss.start();
  } catch (err) {
    bossError = (err as Error).message.split('\n')[0];
  }
  for (let b = 0; b < BLOCKS; b++) {
    hand.push(await handWritten(pglite, `${b}`));
    if (bossError) continue;
    try {
      boss10.push(await pgBoss(boss, (work) => lite.transaction((tx) => work(pgliteAdapter(tx))), `${b}`));
    } catch (err) {
      bossError = (err as Error).message.split('\n')[0];
    }
  }
  await boss.stop({ graceful: false, wait: true }).catch(() => {});
  await lite.close();
  await pglite.close();
  console.log(`queue, PGlite: ${N} jobs x ${BLOCKS} alternating blocks, as above`);
  console.log(`  hand-written SKIP LOCKED: ${median(hand).toFixed(2)} ms/job   (blocks: ${fmt(hand)})`);
  if (boss10.length === BLOCKS) {
    console.log(`  pg-boss 10 (db adapter):  ${median(boss10).toFixed(2)} ms/job   (blocks: ${fmt(boss10)})`);
    console.log(`  pg-boss / hand-written:   ${(median(boss10) / median(hand)).toFixed(2)}x`);
  } else {
    console.log(`  pg-boss 10 (db adapter):  fails: ${bossError}`);
  }
  summary.handPgliteMs = median(hand);
}

// ---------------------------------------------------------------------------------------------
// pipeline: the ingest pipeline directly, and as jobs
// ---------------------------------------------------------------------------------------------

const note = (block: string, i: number) => `# Note ${block}-${i}\n\nGlaze ${i} of block ${block} is fired at cone ${i % 12}. ${'Clay and ash. '.repeat(20)}`;

async function direct(database: Database, block: string): Promise<number> {
  const embedder = createHashEmbedder(64);
  const pipeline = createIngestPipeline({ db: database.db, embedder, tenantId: `direct-${block}` });
  const started = performance.now();
  for (let i = 0; i < N; i++) await pipeline.run({ content: note(block, i), format: 'markdown' });
  return (performance.now() - started) / N;
}

async function queued(database: Database, block: string): Promise<number> {
  const embedder = createHashEmbedder(64);
  const store = createJobStore({ db: database.db, tenantId: `queued-${block}` });
  const started = performance.now();
  for (let i = 0; i < N; i++) await store.enqueue('ingest', { payload: { format: 'markdown' }, content: note(block, i) });
  const runner = startJobRunner({
    queue: createJobLeases(database.db),
    db: database.db,
    handlers: { ingest: ingestJobHandler({ db: database.db, embedder }) },
    logger: createLogger('silent'),
    concurrency: 1,
    leaseMs: 30_000,
    pollMs: 5,
    retryBaseMs: 100,
  });
  for (;;) {
    const [row] = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM jobs WHERE tenant_id = ${`queued-${block}`} AND status = 'succeeded'`,
    );
    if (row!.n >= N) break;
    await sleep(5);
  }
  const perJob = (performance.now() - started) / N;
  await runner.stop();
  return perJob;
}

async function benchPipeline(): Promise<void> {
  const run = async (name: string, database: Database, key: string) => {
    await ensureVectorSpace(database.db, createHashEmbedder(64));
    const directMs: number[] = [];
    const queuedMs: number[] = [];
    for (let b = 0; b < BLOCKS; b++) {
      directMs.push(await direct(database, `${b}`));
      queuedMs.push(await queued(database, `${b}`));
    }
    const d = median(directMs);
    const q = median(queuedMs);
    console.log(`pipeline, ${name}: ${N} documents x ${BLOCKS} alternating blocks, instant embedder, one in-process worker`);
    console.log(`  pipeline directly:  ${d.toFixed(2)} ms/document   (blocks: ${fmt(directMs)})`);
    console.log(`  through the queue:  ${q.toFixed(2)} ms/document   (blocks: ${fmt(queuedMs)})`);
    console.log(`  queue overhead:     ${(q - d).toFixed(2)} ms/job`);
    summary[key] = q - d;
  };
  const pglite = await openDatabase({});
  await run('PGlite', pglite, 'overheadPgliteMs');
  await pglite.close();
  if (serverUrl) {
    const server = await freshServerDatabase(serverUrl, 'memrag_bench_jobs_pipeline');
    const database = await openDatabase({ url: server.url });
    await run('PostgreSQL server', database, 'overheadServerMs');
    await database.close();
    await server.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// throughput: one and two worker processes against the embedder pool alone
// ---------------------------------------------------------------------------------------------

interface WorkerProcess {
  child: ChildProcess;
  exited: Promise<unknown>;
}

async function startWorker(databaseUrl: string): Promise<WorkerProcess> {
  const { DATA_DIR: _d, WORKERS_IN_PROCESS: _w, ...inherited } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker-main.ts'], {
    cwd: repoRoot,
    env: {
      ...inherited,
      DATABASE_URL: databaseUrl,
      EMBEDDING_PROVIDER: 'bundled',
      EMBEDDING_WORKERS: '1',
      JOB_CONCURRENCY: '2',
      JOB_POLL_MS: '50',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  await new Promise<void>((ready, fail) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('memrag worker consuming jobs')) ready();
    });
    void exited.then(() => fail(new Error('worker exited before it was ready')));
  });
  return { child, exited };
}

async function benchThroughput(): Promise<void> {
  if (!serverUrl) {
    console.log('throughput: skipped (set BENCH_DATABASE_URL: worker processes share a PostgreSQL server)');
    return;
  }
  const corpus = (await loadCorpus(resolve(repoRoot, '../shared/datasets/scifact'))).filter((d) => d.text.trim() !== '');
  const server = await freshServerDatabase(serverUrl, 'memrag_bench_jobs_throughput');
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: server.url, EMBEDDING_PROVIDER: 'bundled' });
  const database = await openDatabase({ url: server.url });
  const poolOf = async (threads: number) => createEmbedder({ ...config, EMBEDDING_WORKERS: threads });
  // The schema and vector space exist before the workers start, as after any server's first start.
  const pools = { 1: await poolOf(1), 2: await poolOf(2) };
  const ctx = await createAppContext({ ...config, WORKERS_IN_PROCESS: false }, { embedder: pools[2], logger: createLogger('silent') });
  const workers = [await startWorker(server.url), await startWorker(server.url)];
  const store = createJobStore({ db: database.db, tenantId: 'default' });
  let next = 0;
  const ingestBlock = async (): Promise<{ ms: number; sources: string[] }> => {
    const docs = corpus.slice(next, next + DOCS_PER_BLOCK);
    next += DOCS_PER_BLOCK;
    const started = performance.now();
    for (const d of docs) {
      await store.enqueue('ingest', { payload: { format: 'text', title: d.title, source: `beir:${d.id}` }, content: d.text });
    }
    for (;;) {
      const [row] = await queryRows<{ open: number; failed: number }>(
        database.db,
        sql`SELECT count(*) FILTER (WHERE status IN ('queued', 'running'))::int AS open, count(*) FILTER (WHERE status = 'failed')::int AS failed FROM jobs`,
      );
      if (row!.failed > 0) throw new Error('a job failed');
      if (row!.open === 0) break;
      await sleep(20);
    }
    return { ms: performance.now() - started, sources: docs.map((d) => `beir:${d.id}`) };
  };
  const chunkTexts = async (sources: string[]) =>
    queryRows<{ texts: string[] }>(
      database.db,
      sql`SELECT array_agg(CASE WHEN c.context = '' THEN c.text ELSE c.context || E'\n\n' || c.text END ORDER BY c.index) AS texts
          FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.source = ANY(${textArray(sources)}) GROUP BY c.document_id`,
    );
  try {
    // Warm-up: both workers' models loaded, both pools', not counted.
    await ingestBlock();
    await pools[1].embed(['warm-up']);
    await pools[2].embed(['warm-up', 'warm-up']);
    const perDoc = { one: [] as number[], two: [] as number[], pool1: [] as number[], pool2: [] as number[] };
    const loads: number[] = [];
    for (let b = 0; b < THROUGHPUT_BLOCKS; b++) {
      loads.push(os.loadavg()[0]!);
      // One worker: the other paused while the queue is empty, so it holds no job.
      workers[1]!.child.kill('SIGSTOP');
      const one = await ingestBlock();
      workers[1]!.child.kill('SIGCONT');
      perDoc.one.push(one.ms / DOCS_PER_BLOCK);
      const two = await ingestBlock();
      perDoc.two.push(two.ms / DOCS_PER_BLOCK);
      // The pools alone, on the texts the workers embedded, in the same per-document calls, two at a time as a worker's JOB_CONCURRENCY.
      for (const [threads, sink] of [
        [1, perDoc.pool1],
        [2, perDoc.pool2],
      ] as const) {
        const texts = await chunkTexts(b % 2 === 0 ? one.sources : two.sources);
        const started = performance.now();
        await pooled(texts, 2 * threads, (r) => pools[threads].embed(r.texts));
        sink.push((performance.now() - started) / texts.length);
      }
    }
    const docsPerSecond = (ms: number) => (1000 / ms).toFixed(2);
    console.log(`throughput, PostgreSQL server, bundled embedder, SciFact abstracts: ${DOCS_PER_BLOCK} documents x ${THROUGHPUT_BLOCKS} alternating blocks`);
    console.log(`  load average (1 min) at each block: ${fmt(loads)}`);
    console.log(`  1 worker process (1 embedding thread):     ${docsPerSecond(median(perDoc.one))} docs/s   (ms/doc per block: ${fmt(perDoc.one, 0)})`);
    console.log(`  2 worker processes (1 thread each):        ${docsPerSecond(median(perDoc.two))} docs/s   (ms/doc per block: ${fmt(perDoc.two, 0)})`);
    console.log(`  embedder pool alone, 1 thread:             ${docsPerSecond(median(perDoc.pool1))} docs/s   (ms/doc per block: ${fmt(perDoc.pool1, 0)})`);
    console.log(`  embedder pool alone, 2 threads:            ${docsPerSecond(median(perDoc.pool2))} docs/s   (ms/doc per block: ${fmt(perDoc.pool2, 0)})`);
    console.log(
      `  2 workers / 1 worker: ${(median(perDoc.one) / median(perDoc.two)).toFixed(2)}x; 1 worker / pool(1): ${((median(perDoc.pool1) / median(perDoc.one)) * 100).toFixed(0)}%; 2 workers / pool(2): ${((median(perDoc.pool2) / median(perDoc.two)) * 100).toFixed(0)}%`,
    );
    summary.embedderMsPerDoc1 = median(perDoc.pool1);
    summary.embedderMsPerDoc2 = median(perDoc.pool2);
  } finally {
    for (const w of workers) {
      w.child.kill('SIGCONT');
      w.child.kill('SIGTERM');
    }
    await Promise.all(workers.map((w) => w.exited));
    await ctx.close();
    await pools[1].close();
    await database.close();
    await server.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// latency: from 202 to searchable
// ---------------------------------------------------------------------------------------------

async function benchLatency(): Promise<void> {
  const corpus = (await loadCorpus(resolve(repoRoot, '../shared/datasets/scifact'))).filter((d) => d.text.trim() !== '' && d.title.trim() !== '');
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATA_DIR: 'memory://', DATABASE_URL: undefined, EMBEDDING_PROVIDER: 'bundled' });
  const embedder = await createEmbedder(config);
  const ctx = await createAppContext(config, { embedder, logger: createLogger('silent') });
  const app = createApp(ctx);
  const post = async (path: string, body: unknown) => {
    const res = await app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  try {
    // A store that is not empty, and a warm model.
    for (const d of corpus.slice(0, 20)) await post('/v1/documents', { title: d.title, text: d.text });
    const bm25: number[] = [];
    const vector: number[] = [];
    const ended: number[] = [];
    for (const d of corpus.slice(20, 20 + LATENCY_RUNS)) {
      const accepted = await post('/v1/documents', { title: d.title, text: d.text, async: true });
      const t0 = performance.now();
      if (accepted.status !== 202) throw new Error(`expected 202, got ${accepted.status}`);
      const jobId = accepted.body.job.id as string;
      // Found when it is the first hit for its own title: BM25 and vector polled side by side.
      const until = async (mode: 'text' | 'vector') => {
        for (;;) {
          const res = await post('/v1/search', { query: d.title, mode, topK: 3 });
          if ((res.body.hits as { title: string }[]).some((h) => h.title === d.title)) return performance.now() - t0;
          if (performance.now() - t0 > 60_000) throw new Error(`"${d.title}" not found by ${mode} within 60 s`);
          await sleep(5);
        }
      };
      const job = (async () => {
        for (;;) {
          const res = await app.request(`/v1/jobs/${jobId}`);
          const body = (await res.json()) as { job: { status: string } };
          if (body.job.status === 'succeeded') return performance.now() - t0;
          if (body.job.status === 'failed') throw new Error('job failed');
          await sleep(5);
        }
      })();
      const [b, v, j] = await Promise.all([until('text'), until('vector'), job]);
      bm25.push(b);
      vector.push(v);
      ended.push(j);
    }
    console.log(
      `latency, npm start defaults (PGlite, in-process workers, bundled embedder with ${os.availableParallelism()} threads): ${LATENCY_RUNS} abstracts, one at a time`,
    );
    console.log(`  202 -> job succeeded:      median ${median(ended).toFixed(0)} ms   (${fmt(ended, 0)})`);
    console.log(`  202 -> found by BM25:      median ${median(bm25).toFixed(0)} ms   (${fmt(bm25, 0)})`);
    console.log(`  202 -> found by vector:    median ${median(vector).toFixed(0)} ms   (${fmt(vector, 0)})`);
  } finally {
    await ctx.close();
  }
}

if (parts.has('queue')) await benchQueue();
if (parts.has('pipeline')) await benchPipeline();
if (parts.has('throughput')) await benchThroughput();
if (parts.has('latency')) await benchLatency();
const overhead = summary.overheadServerMs ?? summary.overheadPgliteMs;
const perDoc = summary.embedderMsPerDoc2;
if (overhead !== undefined && perDoc !== undefined) {
  console.log(
    `queue overhead as a share of the embedder's time per document (pool of 2 threads, ${perDoc.toFixed(0)} ms/doc): ${((overhead / perDoc) * 100).toFixed(1)}%`,
  );
}
console.log(
  `load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
