import { sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { queryRows } from '../db/query-rows.js';
import { textArray } from '../db/sql-arrays.js';
import { type ClaimedJob, type JobError, JobLeaseLostError, type JobProgress } from './job-types.js';
import { toJob } from './job-rows.js';

/**
 * The workers' side of the jobs table, shared by every process on the database: claim, report
 * progress (which also renews the lease), and finish. Every write after the claim is fenced by
 * `(id, worker, attempt, status = running)`: a worker whose job was cancelled, or taken over after
 * its lease ran out, changes nothing, and learns so (JobLeaseLostError).
 *
 * Hand-written rather than pg-boss or graphile-worker (docs/benchmarks/jobs.md, "Why a
 * hand-written queue, not pg-boss", with `npm run bench:jobs`'s figures): pg-boss 10, the newest
 * on Node 20, was not faster per job on either driver (1.3-1.5x the time on the server, 1.2-1.3x
 * on PGlite in full runs), and it has no lease renewal (a job is taken back only after a fixed `expireIn`, whatever
 * the job's length) and no progress, so the API's progress, events and batches would need this
 * table anyway; graphile-worker 0.18 and pg-boss 11+ need Node 22. What a library would have
 * given, the effect (the document) and `succeeded` in one transaction on either driver, this
 * table gives as well: it is of the project's own migrations.
 */
export interface JobLeases {
  /**
   * The oldest due job of one of `kinds` (default any), leased to `workerId` for `leaseMs`; a
   * running job whose lease ran out is due again. A worker claims only the kinds it can run.
   */
  claim(workerId: string, leaseMs: number, kinds?: readonly string[]): Promise<ClaimedJob | undefined>;
  /** Records progress and renews the lease; throws JobLeaseLostError when the job is no longer this worker's. */
  progress(job: ClaimedJob, workerId: string, leaseMs: number, progress?: JobProgress): Promise<void>;
  /** Marks the job succeeded, inside the caller's transaction `tx`, which must roll back if this throws. */
  complete(tx: Db, job: ClaimedJob, workerId: string, result: Record<string, unknown>, progress?: JobProgress): Promise<void>;
  /**
   * Ends an attempt that failed: queued again after `retryInMs` when given and attempts remain,
   * else failed with `error`. False when the job was no longer this worker's.
   */
  fail(job: ClaimedJob, workerId: string, error: JobError, retryInMs?: number): Promise<boolean>;
  /** Gives a job back unfinished (the worker is shutting down): queued again, the attempt not counted. */
  release(job: ClaimedJob, workerId: string): Promise<void>;
  /** Open jobs by status, for the queue-depth gauge. */
  depth(): Promise<{ queued: number; running: number }>;
}

export function createJobLeases(db: Db): JobLeases {
  const fence = (job: ClaimedJob, workerId: string) => sql`id = ${job.id} AND worker_id = ${workerId} AND attempt = ${job.attempt} AND status = 'running'`;

  async function claim(workerId: string, leaseMs: number, kinds?: readonly string[]): Promise<ClaimedJob | undefined> {
    const ofKinds = kinds ? sql`AND kind = ANY(${textArray(kinds)})` : sql``;
    // SKIP LOCKED: concurrent claimers each take a different row instead of queueing on one.
    const [row] = await queryRows<Record<string, unknown>>(
      db,
      sql`UPDATE jobs SET status = 'running', attempt = attempt + 1, worker_id = ${workerId},
            lease_until = now() + make_interval(secs => ${leaseMs / 1000}),
            started_at = coalesce(started_at, now()), updated_at = now(), event_seq = event_seq + 1
          WHERE id = (
            SELECT id FROM jobs
            WHERE kind <> 'batch' ${ofKinds} AND run_at <= now()
              AND (status = 'queued' OR (status = 'running' AND lease_until < now()))
            ORDER BY run_at, created_at
            LIMIT 1
            FOR UPDATE SKIP LOCKED)
          RETURNING *`,
    );
    if (!row) return undefined;
    if (row.parent_id) await settleBatch(db, row.parent_id as string);
    return toClaimed(row);
  }

  async function progress(job: ClaimedJob, workerId: string, leaseMs: number, next?: JobProgress): Promise<void> {
    const lease = sql`lease_until = now() + make_interval(secs => ${leaseMs / 1000})`;
    const rows = await queryRows(
      db,
      next
        ? sql`UPDATE jobs SET ${lease}, progress = ${JSON.stringify(next)}::jsonb, event_seq = event_seq + 1, updated_at = now() WHERE ${fence(job, workerId)} RETURNING id`
        : sql`UPDATE jobs SET ${lease} WHERE ${fence(job, workerId)} RETURNING id`,
    );
    if (rows.length === 0) throw new JobLeaseLostError(job.id);
  }

  async function complete(tx: Db, job: ClaimedJob, workerId: string, result: Record<string, unknown>, last?: JobProgress): Promise<void> {
    // The last stage reported, finished: a progress write still in flight would come too late.
    const final = last ? sql`${JSON.stringify({ ...last, done: last.total })}::jsonb` : sql`jsonb_set(progress, '{done}', progress->'total')`;
    const rows = await queryRows(
      tx,
      sql`UPDATE jobs SET status = 'succeeded', result = ${JSON.stringify(result)}::jsonb, error = NULL, finished_at = now(),
            updated_at = now(), event_seq = event_seq + 1, lease_until = NULL, content = NULL,
            progress = ${final}
          WHERE ${fence(job, workerId)} RETURNING id`,
    );
    if (rows.length === 0) throw new JobLeaseLostError(job.id);
    if (job.parentId) await settleBatch(tx, job.parentId);
  }

  async function fail(job: ClaimedJob, workerId: string, error: JobError, retryInMs?: number): Promise<boolean> {
    const retry = retryInMs !== undefined && job.attempt < job.maxAttempts;
    const rows = await queryRows(
      db,
      retry
        ? sql`UPDATE jobs SET status = 'queued', run_at = now() + make_interval(secs => ${retryInMs / 1000}), error = ${JSON.stringify(error)}::jsonb,
                lease_until = NULL, worker_id = NULL, updated_at = now(), event_seq = event_seq + 1
              WHERE ${fence(job, workerId)} RETURNING id`
        : sql`UPDATE jobs SET status = 'failed', error = ${JSON.stringify(error)}::jsonb, finished_at = now(), lease_until = NULL, content = NULL,
                updated_at = now(), event_seq = event_seq + 1
              WHERE ${fence(job, workerId)} RETURNING id`,
    );
    if (rows.length > 0 && !retry && job.parentId) await settleBatch(db, job.parentId);
    return rows.length > 0;
  }

  async function release(job: ClaimedJob, workerId: string): Promise<void> {
    await db.execute(
      sql`UPDATE jobs SET status = 'queued', attempt = attempt - 1, lease_until = NULL, worker_id = NULL, updated_at = now(), event_seq = event_seq + 1
          WHERE ${fence(job, workerId)}`,
    );
  }

  async function depth() {
    const rows = await queryRows<{ status: string; n: number | string }>(
      db,
      sql`SELECT status, count(*) AS n FROM jobs WHERE status IN ('queued', 'running') AND kind <> 'batch' GROUP BY status`,
    );
    const of = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
    return { queued: of('queued'), running: of('running') };
  }

  return { claim, progress, complete, fail, release, depth };
}

/**
 * A batch's status and progress from its items: running once one started, succeeded once all
 * ended (their own statuses say which failed). A cancelled batch stays cancelled.
 *
 * The batch row is locked before its items are counted, in a statement of its own: two items
 * ending at once each counted with a snapshot taken before the other committed, and the later
 * write left the batch running, one item short, for good. Locked first, the second waits for the
 * first to commit, then counts with a snapshot that has it. Inside the caller's transaction when
 * there is one (a savepoint), so the lock is held until the item's own write commits.
 */
export async function settleBatch(db: Db, batchId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`SELECT 1 FROM jobs WHERE id = ${batchId} FOR UPDATE`);
    await settleLockedBatch(tx, batchId);
  });
}

async function settleLockedBatch(db: Db, batchId: string): Promise<void> {
  await db.execute(sql`
    UPDATE jobs AS b SET
      status = CASE WHEN c.ended = c.total THEN 'succeeded' WHEN c.started > 0 THEN 'running' ELSE b.status END,
      started_at = CASE WHEN c.started > 0 THEN coalesce(b.started_at, now()) ELSE b.started_at END,
      finished_at = CASE WHEN c.ended = c.total THEN now() ELSE NULL END,
      progress = jsonb_build_object('stage', 'items', 'done', c.ended, 'total', c.total),
      event_seq = b.event_seq + 1, updated_at = now()
    FROM (
      SELECT count(*)::int AS total,
             count(*) FILTER (WHERE status IN ('succeeded', 'failed', 'cancelled'))::int AS ended,
             count(*) FILTER (WHERE status <> 'queued' OR attempt > 0)::int AS started
      FROM jobs WHERE parent_id = ${batchId}) AS c
    WHERE b.id = ${batchId} AND b.status IN ('queued', 'running')`);
}

function toClaimed(row: Record<string, unknown>): ClaimedJob {
  const camel = {
    id: row.id,
    tenantId: row.tenant_id,
    kind: row.kind,
    status: row.status,
    parentId: row.parent_id,
    payload: row.payload,
    content: row.content,
    progress: row.progress,
    eventSeq: row.event_seq,
    result: row.result,
    error: row.error,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  } as Record<string, unknown>;
  const payload = (typeof camel.payload === 'string' ? JSON.parse(camel.payload) : camel.payload) as Record<string, unknown>;
  const parse = (v: unknown) => (typeof v === 'string' ? (JSON.parse(v) as unknown) : v);
  const job = toJob({ ...(camel as object), progress: parse(camel.progress), result: parse(camel.result), error: parse(camel.error) } as never);
  const content = typeof camel.content === 'string' ? camel.content : null;
  return {
    ...job,
    tenantId: camel.tenantId as string,
    payload,
    content: content === null ? null : payload.contentEncoding === 'base64' ? new Uint8Array(Buffer.from(content, 'base64')) : content,
    maxAttempts: Number(camel.maxAttempts),
  };
}
