import { randomUUID } from 'node:crypto';
import { and, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { jobs } from '../db/schema/index.js';
import { afterCursor, createdAtText, keysetPage } from '../retrieval/keyset-page.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { settleBatch } from './job-leases.js';
import { QUEUED_PROGRESS, jobColumns, toJob } from './job-rows.js';
import type { BatchCounts, Job, JobKind, JobStatus } from './job-types.js';

/** What a job is given: its parameters, and the document's text or a file's bytes. */
export interface JobInput {
  payload: Record<string, unknown>;
  content?: string | Uint8Array | null;
  /** The user whose data the job carries: erasing that user erases the job. */
  userId?: string | null;
}

export interface JobPage {
  items: Job[];
  nextCursor: string | null;
}

/** A batch and how its items stand. */
export interface BatchView {
  counts: BatchCounts;
  items: Job[];
}

export interface CancelOutcome {
  job: Job;
  /** False when the job had ended already: it is answered as it is, unchanged. */
  cancelled: boolean;
}

export interface RetryOutcome {
  job: Job;
  /** False when it was not queued again: the job is answered as it is, unchanged. */
  retried: boolean;
  /** Why not: it has not failed (it is open, or ended otherwise), or its input was dropped when it failed. */
  refused?: 'not_failed' | 'input_gone';
}

/** One tenant's jobs, as the API sees them. */
export interface JobStore {
  /** Queues one job; `tx` lets a caller queue it with other writes. */
  enqueue(kind: JobKind, input: JobInput, tx?: Db): Promise<Job>;
  /** One batch job with an item job per input, in one transaction: all queued, or none. */
  enqueueBatch(kind: JobKind, inputs: JobInput[]): Promise<Job>;
  get(id: string): Promise<Job | undefined>;
  /** Newest first, by status and kind when given. */
  list(options: { status?: JobStatus; kind?: JobKind; limit: number; cursor?: string }): Promise<JobPage>;
  /** A batch's items (in the order given) and their counts by status. */
  batch(id: string): Promise<BatchView>;
  /** Cancels a queued or running job (a batch: its open items too); undefined when there is no such job. */
  cancel(id: string): Promise<CancelOutcome | undefined>;
  /**
   * Queues a failed job again, with its attempts counted afresh (a batch's item reopens its
   * batch); undefined when there is no such job.
   */
  retry(id: string): Promise<RetryOutcome | undefined>;
}

export interface JobStoreOptions {
  db: Db;
  tenantId?: string;
  /** Attempts before a job that keeps failing transiently (or losing its worker) is failed. Default 3. */
  maxAttempts?: number;
  /** Told when jobs were queued (how many), so that as many idle workers in this process start at once. */
  onEnqueued?: (jobs: number) => void;
}

export function createJobStore(options: JobStoreOptions): JobStore {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const maxAttempts = options.maxAttempts ?? 3;
  const owned = (id: string) => and(eq(jobs.tenantId, tenantId), eq(jobs.id, id));

  const row = (kind: JobKind, input: JobInput, parentId: string | null) => {
    const bytes = input.content instanceof Uint8Array;
    return {
      id: randomUUID(),
      tenantId,
      kind,
      status: 'queued',
      userId: input.userId ?? '',
      parentId,
      payload: { ...input.payload, ...(input.content != null ? { contentEncoding: bytes ? 'base64' : 'text' } : {}) },
      content: input.content == null ? null : bytes ? Buffer.from(input.content as Uint8Array).toString('base64') : (input.content as string),
      progress: { ...QUEUED_PROGRESS },
      maxAttempts,
    };
  };

  async function enqueue(kind: JobKind, input: JobInput, tx: Db = db): Promise<Job> {
    const [inserted] = await tx
      .insert(jobs)
      .values(row(kind, input, null))
      .returning(jobColumns);
    options.onEnqueued?.(1);
    return toJob(inserted!);
  }

  async function enqueueBatch(kind: JobKind, inputs: JobInput[]): Promise<Job> {
    const created = await db.transaction(async (tx) => {
      const [batch] = await tx
        .insert(jobs)
        .values({ ...row('batch', { payload: { itemKind: kind, items: inputs.length } }, null), progress: { stage: 'items', done: 0, total: inputs.length } })
        .returning(jobColumns);
      // Items are written in order: created_at ties are broken by the claim's ORDER BY, and `batch()` reads them back by position.
      for (const [i, input] of inputs.entries()) {
        await tx.insert(jobs).values({ ...row(kind, input, batch!.id), payload: { ...row(kind, input, batch!.id).payload, position: i } });
      }
      return batch!;
    });
    options.onEnqueued?.(inputs.length);
    return toJob(created);
  }

  async function get(id: string): Promise<Job | undefined> {
    const [found] = await db.select(jobColumns).from(jobs).where(owned(id));
    return found && toJob(found);
  }

  async function list({ status, kind, limit, cursor }: { status?: JobStatus; kind?: JobKind; limit: number; cursor?: string }): Promise<JobPage> {
    const rows = await db
      .select({ ...jobColumns, createdAtText: createdAtText(jobs) })
      .from(jobs)
      .where(and(eq(jobs.tenantId, tenantId), status ? eq(jobs.status, status) : undefined, kind ? eq(jobs.kind, kind) : undefined, afterCursor(cursor, jobs)))
      .orderBy(desc(jobs.createdAt), desc(jobs.id))
      .limit(limit + 1);
    return keysetPage(rows, limit, toJob);
  }

  async function batch(id: string): Promise<BatchView> {
    const items = (
      await db
        .select(jobColumns)
        .from(jobs)
        .where(and(eq(jobs.tenantId, tenantId), eq(jobs.parentId, id)))
        .orderBy(sql`(${jobs.payload}->>'position')::int`)
    ).map(toJob);
    const counts: BatchCounts = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
    for (const item of items) counts[item.status] += 1;
    return { counts, items };
  }

  async function cancel(id: string): Promise<CancelOutcome | undefined> {
    return db.transaction(async (tx) => {
      // Compare-and-set: a job that ended meanwhile keeps its ending; a running one's worker sees
      // the status change at its next progress write and rolls back what it was writing.
      const [cancelled] = await tx
        .update(jobs)
        .set({ status: 'cancelled', finishedAt: sql`now()`, updatedAt: sql`now()`, leaseUntil: null, content: null, eventSeq: sql`${jobs.eventSeq} + 1` })
        .where(and(owned(id), inArray(jobs.status, ['queued', 'running'])))
        .returning(jobColumns);
      if (!cancelled) {
        const [found] = await tx.select(jobColumns).from(jobs).where(owned(id));
        return found && { job: toJob(found), cancelled: false };
      }
      if (cancelled.kind === 'batch') {
        await tx
          .update(jobs)
          .set({ status: 'cancelled', finishedAt: sql`now()`, updatedAt: sql`now()`, leaseUntil: null, content: null, eventSeq: sql`${jobs.eventSeq} + 1` })
          .where(and(eq(jobs.tenantId, tenantId), eq(jobs.parentId, id), inArray(jobs.status, ['queued', 'running'])));
      }
      return { job: toJob(cancelled), cancelled: true };
    });
  }

  async function retry(id: string): Promise<RetryOutcome | undefined> {
    const outcome = await db.transaction(async (tx): Promise<RetryOutcome | undefined> => {
      const [found] = await tx
        .select({ ...jobColumns, payload: jobs.payload, hasContent: sql<boolean>`${jobs.content} IS NOT NULL` })
        .from(jobs)
        .where(owned(id))
        .for('update');
      if (!found) return undefined;
      if (found.status !== 'failed') return { job: toJob(found), retried: false, refused: 'not_failed' };
      // A failed job's text or file is dropped (it may be large): nothing is left to run it on.
      if (found.payload.contentEncoding !== undefined && !found.hasContent) return { job: toJob(found), retried: false, refused: 'input_gone' };
      const [queued] = await tx
        .update(jobs)
        .set({
          status: 'queued',
          attempt: 0,
          runAt: sql`now()`,
          finishedAt: null,
          leaseUntil: null,
          workerId: null,
          updatedAt: sql`now()`,
          eventSeq: sql`${jobs.eventSeq} + 1`,
        })
        .where(and(owned(id), eq(jobs.status, 'failed')))
        .returning(jobColumns);
      if (found.parentId) {
        // Its batch had ended with it: open again until the item ends anew (a cancelled batch stays so).
        await tx
          .update(jobs)
          .set({ status: 'running', finishedAt: null })
          .where(and(eq(jobs.tenantId, tenantId), eq(jobs.id, found.parentId), eq(jobs.status, 'succeeded')));
        await settleBatch(tx, found.parentId);
      }
      return { job: toJob(queued!), retried: true };
    });
    if (outcome?.retried) options.onEnqueued?.(1);
    return outcome;
  }

  return { enqueue, enqueueBatch, get, list, batch, cancel, retry };
}
