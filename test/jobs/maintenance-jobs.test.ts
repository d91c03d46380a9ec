import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { backfillSteps } from '../../src/backfill-steps.js';
import { loadConfig } from '../../src/config/config.js';
import type { Db } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { ensureVectorSpace, readSpace } from '../../src/db/vector-space.js';
import { clearBm25Index } from '../../src/retrieval/bm25/bm25-corpus.js';
import { MEMORY_BM25 } from '../../src/retrieval/bm25/bm25-index-tables.js';
import { createJobLeases } from '../../src/jobs/job-leases.js';
import { SYSTEM_TENANT_ID } from '../../src/jobs/job-types.js';
import { backfillNeeded, queueReembed, runReembedJob } from '../../src/jobs/maintenance-jobs.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { createCapturedLogger } from '../support/captured-logger.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { describeOnDrivers } from '../support/database-drivers.js';

const MEMORIES = Array.from({ length: 30 }, (_, i) => ({
  key: `m${i}`,
  content: `Kiln log ${i}: the ${i % 2 ? 'salt' : 'soda'} firing reached cone ${i % 13}`,
}));

async function backfillJobs(db: Db) {
  return queryRows<{ id: string; status: string; progress: unknown; result: unknown }>(
    db,
    sql`SELECT id, status, progress, result FROM jobs WHERE tenant_id = ${SYSTEM_TENANT_ID} AND kind = 'backfill' ORDER BY created_at`,
  );
}

describeOnDrivers('maintenance as jobs', (driver) => {
  const embedder = createHashEmbedder(64);
  const start = (env: Record<string, string>, extra: Record<string, string>) =>
    createAppContext(loadConfig({ LOG_LEVEL: 'silent', JOB_POLL_MS: '20', ...env, ...extra }), { embedder });

  it('the start-up backfill is a job: a server serves at once with its memories unindexed, one job is queued however many start, and a worker indexes them', async () => {
    // PGlite's in a directory, not in memory: the store outlives each process that opens it.
    const dataDir = mkdtempSync(join(tmpdir(), 'memrag-backfill-'));
    const prepared = driver.name === 'PGlite' ? { env: { DATA_DIR: dataDir }, release: async () => {} } : await driver.provision();
    const opened: AppContext[] = [];
    try {
      // A store whose memories were saved before their BM25 index existed.
      const first = await start(prepared.env, { WORKERS_IN_PROCESS: 'false' });
      opened.push(first);
      for (const m of MEMORIES) await first.memories.forTenant('default').save(m);
      await first.database.db.transaction(async (tx) => {
        await clearBm25Index(tx, MEMORY_BM25, 'default');
        await tx.execute(sql`UPDATE memories SET bm25_length = NULL`);
      });
      expect(await backfillNeeded(first.database.db, backfillSteps(embedder))).toBe(true);
      await first.close();

      // Servers without workers serve at once, text search missing the memories for now, with one
      // job between them: on the server two start at once; PGlite's directory is one process's at a time.
      const pglite = driver.name === 'PGlite';
      const noWorkers = () => start(prepared.env, { WORKERS_IN_PROCESS: 'false' });
      for (const ctx of pglite ? [await noWorkers()] : await Promise.all([noWorkers(), noWorkers()])) {
        opened.push(ctx);
        expect(await ctx.memories.forTenant('default').search('salt firing', { mode: 'text' })).toEqual([]);
        // Not a tenant's: no API key's tenant lists it.
        expect((await ctx.jobQueue.stores.forTenant('default').list({ limit: 10 })).items).toEqual([]);
      }
      if (pglite) {
        await opened.at(-1)!.close();
        opened.push(await noWorkers());
      }
      const queued = await backfillJobs(opened.at(-1)!.database.db);
      expect(queued).toEqual([expect.objectContaining({ status: 'queued' })]);
      if (pglite) await opened.at(-1)!.close();

      // A process with workers takes the queued job rather than queueing another.
      const worker = await start(prepared.env, { WORKERS_IN_PROCESS: 'true' });
      opened.push(worker);
      const db = worker.database.db;
      const until = Date.now() + 20_000;
      let jobs = await backfillJobs(db);
      while (jobs[0]?.status !== 'succeeded' && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 25));
        jobs = await backfillJobs(db);
      }
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({
        id: queued[0]!.id,
        status: 'succeeded',
        progress: { stage: 'passages', done: 1, total: 1 },
        result: { memoriesIndexed: MEMORIES.length, memoriesRebuilt: false, turnsReindexed: 0, documentsRegrouped: 0 },
      });
      expect(await backfillNeeded(db, backfillSteps(embedder))).toBe(false);

      // Indexed exactly as saves index: the same scores as the same memories saved in a tenant of their own.
      const fresh = worker.memories.forTenant('fresh');
      for (const m of MEMORIES) await fresh.save(m);
      const hits = await worker.memories.forTenant('default').search('salt firing cone', { mode: 'text', topK: 30 });
      const reference = await fresh.search('salt firing cone', { mode: 'text', topK: 30 });
      expect(hits.length).toBeGreaterThan(0);
      // (Ties are ordered by id, which differs between the tenants: compared as key -> score.)
      expect(Object.fromEntries(hits.map((h) => [h.memory.key, h.score]))).toEqual(Object.fromEntries(reference.map((h) => [h.memory.key, h.score])));
      await worker.close();

      // A start on an up-to-date store queues nothing.
      const again = await start(prepared.env, { WORKERS_IN_PROCESS: 'false' });
      opened.push(again);
      expect(await backfillJobs(again.database.db)).toHaveLength(1);
    } finally {
      for (const ctx of opened) await ctx.close().catch(() => {});
      await prepared.release();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('npm run reembed is a job: progress per table, the new space recorded, a stale job for another model refused, and servers never claim it', async () => {
    const database = await driver.open();
    try {
      const oldEmbedder = createHashEmbedder(64);
      const newEmbedder = createHashEmbedder(32, 'test:new-32');
      await ensureVectorSpace(database.db, oldEmbedder);
      const store = createPgMemoryStore({ db: database.db, embedder: oldEmbedder });
      for (let i = 0; i < 50; i++) await store.save({ key: `k${i}`, content: `memory ${i} about glaze ${i % 5}` });

      // Servers' and workers' runners claim only what they have handlers for.
      const stale = await queueReembed(database.db, oldEmbedder);
      expect(await createJobLeases(database.db).claim('server', 30_000, ['ingest', 'backfill'])).toBeUndefined();

      const progress: string[] = [];
      const { logger, lines } = createCapturedLogger('info');
      const job = await runReembedJob({
        db: database.db,
        embedder: newEmbedder,
        batchSize: 20,
        logger,
        pollMs: 20,
        onProgress: (p) => progress.push(`${p.stage} ${p.done}/${p.total}`),
      });
      expect(job).toMatchObject({
        kind: 'reembed',
        status: 'succeeded',
        result: {
          embedderId: 'test:new-32',
          dimensions: 32,
          tables: [
            { table: 'memories', rows: 50 },
            { table: 'chunks', rows: 0 },
            { table: 'turns', rows: 0 },
          ],
        },
      });
      expect(progress).toEqual(['memories 20/50', 'memories 40/50', 'memories 50/50']);
      expect(job.progress).toEqual({ stage: 'memories', done: 50, total: 50 });
      expect(await readSpace(database.db, 'memories')).toEqual({ embedderId: 'test:new-32', dimensions: 32 });
      const [hit] = await createPgMemoryStore({ db: database.db, embedder: newEmbedder }).search('memory 7 about glaze 2', { mode: 'vector', topK: 1 });
      expect(hit?.memory.key).toBe('k7');

      // The job queued earlier for the old model was taken first, and refused: it would undo the switch.
      const [old] = await queryRows<{ status: string; error: { code: string } }>(database.db, sql`SELECT status, error FROM jobs WHERE id = ${stale.id}`);
      expect(old).toMatchObject({ status: 'failed', error: { code: 'embedder_mismatch' } });
      // The store's own job failing for good is the operator's to hear of, not only a row to find.
      expect(lines).toContainEqual(
        expect.objectContaining({ level: 'error', jobId: stale.id, kind: 'reembed', msg: expect.stringContaining('reembed job failed') }),
      );
    } finally {
      await database.close();
    }
  });
});
