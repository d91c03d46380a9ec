import { randomUUID } from 'node:crypto';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { queryRows } from '../db/query-rows.js';
import { reembedAll } from '../db/reembed.js';
import { jobs } from '../db/schema/index.js';
import type { Embedder } from '../embeddings/embedder.js';
import { AnalyzerMismatchError } from '../retrieval/analyzer-mismatch-error.js';
import type { BackfillStep } from '../retrieval/backfill-step.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import type { Logger } from '../observability/logger.js';
import { createJobLeases } from './job-leases.js';
import { type JobHandler, startJobRunner } from './job-runner.js';
import { FINAL_JOB_STATUSES, type Job, type JobProgress, PermanentJobError, SYSTEM_TENANT_ID } from './job-types.js';
import { QUEUED_PROGRESS, jobColumns, toJob } from './job-rows.js';

// Serialises the start-up check of processes starting at once, so they queue one backfill between them.
const BACKFILL_LOCK_ID = 727274103;

/**
 * Whether the BM25 indexes need the start-up upkeep: whether any step (each corpus's, src/backfill-steps.ts)
 * has work, asked in one query. Memories' probe is answered by a partial index; turns' and
 * documents' scan their tables when nothing is left to do, which a partial index each would spare.
 */
export async function backfillNeeded(db: Db, steps: readonly BackfillStep[], analyzer: Analyzer = defaultAnalyzer): Promise<boolean> {
  if (steps.length === 0) return false;
  const pending = sql.join(
    steps.map((step) => sql`(${step.pending(analyzer)})`),
    sql` OR `,
  );
  const [row] = await queryRows<{ needed: boolean }>(db, sql`SELECT ${pending} AS needed`);
  return row?.needed === true;
}

/**
 * Queues the start-up backfill when the store needs one and none is queued or running yet, so a
 * server serves at once on a large store, and the workers bring its indexes up to date meanwhile
 * (until then text search misses what is not indexed yet). The job, or undefined when none is needed.
 */
export async function queueBackfillIfNeeded(
  db: Db,
  maxAttempts: number,
  steps: readonly BackfillStep[],
  analyzer: Analyzer = defaultAnalyzer,
): Promise<Job | undefined> {
  if (!(await backfillNeeded(db, steps, analyzer))) return undefined;
  return db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${BACKFILL_LOCK_ID})`);
    const [open] = await tx
      .select(jobColumns)
      .from(jobs)
      .where(and(eq(jobs.tenantId, SYSTEM_TENANT_ID), eq(jobs.kind, 'backfill'), inArray(jobs.status, ['queued', 'running'])))
      .limit(1);
    if (open) return toJob(open);
    const [created] = await tx
      .insert(jobs)
      .values(systemJob('backfill', {}, maxAttempts))
      .returning(jobColumns);
    return toJob(created!);
  });
}

/**
 * The start-up backfill, as a job: each step in turn (memories, then turns, then passages, as
 * src/backfill-steps.ts lists them). Each step works in batches of one transaction under the
 * tenant's corpus lock and resumes where it stopped, so a retried job (its worker died) does only
 * what is left, and ingests and saves go on meanwhile.
 */
export function backfillJobHandler(options: { db: Db; steps: readonly BackfillStep[]; analyzer?: Analyzer }): JobHandler {
  const { db, steps, analyzer } = options;
  return async ({ report }) => {
    try {
      const result: Record<string, unknown> = {};
      for (const step of steps) {
        Object.assign(result, await step.run({ db, analyzer, report: (done, total) => report({ stage: step.stage, done, total }) }));
      }
      return result;
    } catch (err) {
      // Documents' postings of another analyzer need a re-ingest (the error says how): no retry fixes that.
      if (err instanceof AnalyzerMismatchError) throw new PermanentJobError('analyzer_mismatch', err.message);
      throw err;
    }
  };
}

/** Queues a re-embedding of the whole store with `embedder` (the job's worker must have that very embedder). */
export async function queueReembed(db: Db, embedder: Pick<Embedder, 'id' | 'dimensions'>): Promise<Job> {
  // One attempt: a re-embedding is one transaction, and a crash leaves the old space; the operator runs it again.
  const [created] = await db
    .insert(jobs)
    .values(systemJob('reembed', { embedderId: embedder.id, dimensions: embedder.dimensions }, 1))
    .returning(jobColumns);
  return toJob(created!);
}

/**
 * Re-embeds every vector table, reporting each table's rows done. One transaction (see
 * reembedAll): readers see the old space or the new one, and an interrupted run leaves the old.
 * A job queued for another model is refused: it is stale, since the store is re-embedded with the
 * model of the worker that runs it.
 */
export function reembedJobHandler(options: { db: Db; embedder: Embedder; batchSize?: number }): JobHandler {
  return async ({ job, report }) => {
    const wanted = job.payload.embedderId;
    if (wanted !== options.embedder.id) {
      throw new PermanentJobError('embedder_mismatch', `the job re-embeds with ${String(wanted)}, but this worker has ${options.embedder.id}`);
    }
    const summary = await reembedAll(options.db, options.embedder, {
      batchSize: options.batchSize,
      onProgress: ({ table, done, total }) => report({ stage: table, done, total }),
    });
    return { embedderId: options.embedder.id, dimensions: options.embedder.dimensions, tables: summary };
  };
}

function systemJob(kind: 'backfill' | 'reembed', payload: Record<string, unknown>, maxAttempts: number) {
  return { id: randomUUID(), tenantId: SYSTEM_TENANT_ID, kind, status: 'queued', payload, progress: { ...QUEUED_PROGRESS }, maxAttempts };
}

/**
 * `npm run reembed`: queues the re-embedding as a job and works on it in this process, the one
 * with the new model (servers and workers never claim `reembed` jobs), reporting progress as it
 * goes; the job, with its progress, is in the jobs table for operators meanwhile. Resolves with
 * the job as it ended.
 */
export async function runReembedJob(options: {
  db: Db;
  embedder: Embedder;
  batchSize?: number;
  logger: Logger;
  onProgress?: (progress: JobProgress) => void;
  /** How often the job's end is looked for. Default 200 ms. */
  pollMs?: number;
}): Promise<Job> {
  const { db, embedder } = options;
  const queued = await queueReembed(db, embedder);
  const reembed = reembedJobHandler({ db, embedder, batchSize: options.batchSize });
  const runner = startJobRunner({
    queue: createJobLeases(db),
    db,
    handlers: { reembed: (attempt) => reembed({ ...attempt, report: (p) => (options.onProgress?.(p), attempt.report(p)) }) },
    logger: options.logger,
    concurrency: 1,
    // A re-embedding holds its transaction throughout: it renews its lease as long as it runs.
    leaseMs: 60_000,
    pollMs: 100,
    retryBaseMs: 1_000,
  });
  try {
    for (;;) {
      const [job] = await db.select(jobColumns).from(jobs).where(eq(jobs.id, queued.id));
      if (job && (FINAL_JOB_STATUSES as readonly string[]).includes(job.status)) return toJob(job);
      await new Promise((r) => setTimeout(r, options.pollMs ?? 200));
    }
  } finally {
    await runner.stop();
  }
}
