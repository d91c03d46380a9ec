/**
 * Queue overhead per job: the same documents ingested by the pipeline directly, and as jobs through
 * the queue and one in-process worker (concurrency 1), with an instant embedder so that only the
 * queue's own work differs. Alternating blocks, one process. PGlite, and the server at
 * BENCH_DATABASE_URL when set. Not yet here: throughput with one and two worker processes against
 * the bundled embedder, and the time from 202 to searchable.
 *
 *   npm run bench:jobs            BENCH_JOBS=200 BENCH_BLOCKS=4 BENCH_DATABASE_URL=postgres://…
 */
import { sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createIngestPipeline } from '../../src/documents/ingest/ingest-pipeline.js';
import { ingestJobHandler } from '../../src/jobs/ingest-job.js';
import { createJobQueue } from '../../src/jobs/job-queue.js';
import { startJobRunner } from '../../src/jobs/job-runner.js';
import { createJobStore } from '../../src/jobs/job-store.js';
import { createLogger } from '../../src/observability/logger.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';

const N = Number(process.env.BENCH_JOBS ?? 200);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 4);
const text = (block: string, i: number) => `# Note ${block}-${i}\n\nGlaze ${i} of block ${block} is fired at cone ${i % 12}. ${'Clay and ash. '.repeat(20)}`;

async function direct(database: Database, block: string): Promise<number> {
  const embedder = createHashEmbedder(64);
  const pipeline = createIngestPipeline({ db: database.db, embedder, tenantId: `direct-${block}` });
  const started = performance.now();
  for (let i = 0; i < N; i++) await pipeline.run({ content: text(block, i), format: 'markdown' });
  return (performance.now() - started) / N;
}

async function queued(database: Database, block: string): Promise<number> {
  const embedder = createHashEmbedder(64);
  const store = createJobStore({ db: database.db, tenantId: `queued-${block}` });
  const started = performance.now();
  for (let i = 0; i < N; i++) await store.enqueue('ingest', { payload: { format: 'markdown' }, content: text(block, i) });
  const runner = startJobRunner({
    queue: createJobQueue(database.db),
    db: database.db,
    handlers: { ingest: ingestJobHandler({ db: database.db, embedder }) },
    logger: createLogger('silent'),
    concurrency: 1,
    leaseMs: 30_000,
    pollMs: 5,
    retryBaseMs: 100,
  });
  for (;;) {
    const [row] = await queryRows<{ n: number }>(database.db, sql`SELECT count(*)::int AS n FROM jobs WHERE tenant_id = ${`queued-${block}`} AND status = 'succeeded'`);
    if (row!.n >= N) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  const perJob = (performance.now() - started) / N;
  await runner.stop();
  return perJob;
}

async function bench(name: string, database: Database): Promise<void> {
  await ensureVectorSpace(database.db, createHashEmbedder(64));
  const directMs: number[] = [];
  const queuedMs: number[] = [];
  for (let b = 0; b < BLOCKS; b++) {
    directMs.push(await direct(database, `${b}`));
    queuedMs.push(await queued(database, `${b}`));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const d = median(directMs);
  const q = median(queuedMs);
  console.log(`${name}: ${N} documents x ${BLOCKS} alternating blocks, instant embedder`);
  console.log(`  pipeline directly:     ${d.toFixed(2)} ms/document   (blocks: ${directMs.map((x) => x.toFixed(2)).join(', ')})`);
  console.log(`  through the queue:     ${q.toFixed(2)} ms/document   (blocks: ${queuedMs.map((x) => x.toFixed(2)).join(', ')})`);
  console.log(`  queue overhead:        ${(q - d).toFixed(2)} ms/job = ${(((q - d) / 222) * 100).toFixed(1)}% of the bundled embedder's ~222 ms/document (4.5 documents/s)`);
}

const pglite = await openDatabase({});
await bench('PGlite (in-process)', pglite);
await pglite.close();
if (process.env.BENCH_DATABASE_URL) {
  const server = await openDatabase({ url: process.env.BENCH_DATABASE_URL });
  await bench('PostgreSQL server', server);
  await server.close();
}
