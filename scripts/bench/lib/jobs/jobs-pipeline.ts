import { sql } from 'drizzle-orm';
import { type Database, openDatabase } from '../../../../src/db/database.js';
import { queryRows } from '../../../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../../../src/db/vector-space.js';
import { createIngestPipeline } from '../../../../src/documents/ingest/ingest-pipeline.js';
import { ingestJobHandler } from '../../../../src/jobs/ingest-job.js';
import { createJobLeases } from '../../../../src/jobs/job-leases.js';
import { startJobRunner } from '../../../../src/jobs/job-runner.js';
import { createJobStore } from '../../../../src/jobs/job-store.js';
import { createLogger } from '../../../../src/observability/logger.js';
import { createHashEmbedder } from '../../../../testkit/hash-embedder.js';
import { freshServerDatabase } from '../fresh-server-database.js';
import { N, BLOCKS, serverUrl, median, fmt, sleep, summary } from './jobs-config.js';

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

export async function benchPipeline(): Promise<void> {
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
