import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { sql } from 'drizzle-orm';
import { createAppContext } from '../../../../src/app-context.js';
import { loadConfig } from '../../../../src/config/config.js';
import { openDatabase } from '../../../../src/db/database.js';
import { queryRows } from '../../../../src/db/query-rows.js';
import { textArray } from '../../../../src/db/sql-arrays.js';
import { createEmbedder } from '../../../../src/embeddings/create-embedder.js';
import { createJobStore } from '../../../../src/jobs/job-store.js';
import { createLogger } from '../../../../src/observability/logger.js';
import { loadCorpus } from '../beir.js';
import { freshServerDatabase } from '../fresh-server-database.js';
import { pooled } from '../pooled.js';
import { repoRoot, DOCS_PER_BLOCK, THROUGHPUT_BLOCKS, serverUrl, median, fmt, sleep, summary } from './jobs-config.js';

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

export async function benchThroughput(): Promise<void> {
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
