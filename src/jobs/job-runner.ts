import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../db/database.js';
import { jobDuration, jobFailures } from '../observability/job-metrics.js';
import type { Logger } from '../observability/logger.js';
import { type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { MEMRAG_JOB_ATTEMPT, MEMRAG_JOB_ID, MEMRAG_JOB_KIND, MEMRAG_JOB_OUTCOME, MEMRAG_TENANT_ID, recordFailure, withSpan } from '../observability/tracing.js';
import type { JobLeases } from './job-leases.js';
import { type ClaimedJob, type JobError, JobLeaseLostError, type JobProgress, PermanentJobError, SYSTEM_TENANT_ID } from './job-types.js';

/** What a handler is given for one attempt of a job. */
export interface JobAttempt {
  job: ClaimedJob;
  /** Aborted when the job is cancelled or its lease is lost, and at shutdown. */
  signal: AbortSignal;
  /** Records progress (written in the background, the latest one winning); must not throw. */
  report(progress: JobProgress): void;
  /**
   * Renews the lease now, and throws JobLeaseLostError when the job is no longer this worker's
   * (cancelled, deleted with its user, taken over): called just before an effect that is not
   * written in the job's own transaction, so that it does not outlive the job.
   */
  checkpoint(): Promise<void>;
  /**
   * Marks the job succeeded inside `tx`, the transaction of its effect: both commit or neither.
   * A handler that does not call it is completed after it returns.
   */
  complete(tx: Db, result: Record<string, unknown>): Promise<void>;
}

export type JobHandler = (attempt: JobAttempt) => Promise<Record<string, unknown>>;

export interface JobRunnerOptions {
  queue: JobLeases;
  db: Db;
  handlers: Partial<Record<string, JobHandler>>;
  logger: Logger;
  /** Jobs worked on at once by this process. */
  concurrency: number;
  /** A claimed job is another worker's to take once this long passes without a heartbeat. */
  leaseMs: number;
  /** How often an idle worker looks for jobs queued by other processes. */
  pollMs: number;
  /** First retry delay of a transient failure; doubled each attempt, up to 60 s. */
  retryBaseMs: number;
  /** Decides which failures no retry can fix (besides PermanentJobError). */
  isPermanent?: (err: unknown) => JobError | undefined;
}

export interface JobRunner {
  readonly workerId: string;
  /** Looks for work at once: `jobs` (default 1) were just queued in this process. */
  wake(jobs?: number): void;
  /** Stops claiming; jobs in progress are aborted and queued again for another worker. */
  stop(): Promise<void>;
}

export function startJobRunner(options: JobRunnerOptions): JobRunner {
  const { queue, logger, leaseMs, pollMs } = options;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  // Only what this process can run: a re-embed job is the CLI's, with the new model, not a server's.
  const kinds = Object.keys(options.handlers).filter((k) => options.handlers[k] !== undefined);
  const stopping = new AbortController();
  const sleepers = new Set<() => void>();
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        sleepers.delete(done);
        stopping.signal.removeEventListener('abort', done);
        resolve();
      }
      sleepers.add(done);
      stopping.signal.addEventListener('abort', done, { once: true });
    });

  async function loop(): Promise<void> {
    while (!stopping.signal.aborted) {
      let job: ClaimedJob | undefined;
      try {
        job = await queue.claim(workerId, leaseMs, kinds);
      } catch (err) {
        if (!stopping.signal.aborted) logger.warn({ err }, 'job claim failed');
      }
      if (job) await runOne(job);
      else await sleep(pollMs);
    }
  }

  /** One attempt, traced as a `job <kind>` span of its own trace, with the attempt's outcome. */
  function runOne(job: ClaimedJob): Promise<void> {
    const attributes = { [MEMRAG_JOB_KIND]: job.kind, [MEMRAG_JOB_ID]: job.id, [MEMRAG_JOB_ATTEMPT]: job.attempt, [MEMRAG_TENANT_ID]: job.tenantId };
    return withSpan(`job ${job.kind}`, attributes, (span) => attemptJob(job, span), { kind: SpanKind.CONSUMER, root: true });
  }

  async function attemptJob(job: ClaimedJob, span: Span): Promise<void> {
    const started = performance.now();
    const lost = new AbortController();
    const signal = AbortSignal.any([lost.signal, stopping.signal]);
    const observe = (outcome: string) => {
      jobDuration.observe({ kind: job.kind, outcome }, (performance.now() - started) / 1000);
      span.setAttribute(MEMRAG_JOB_OUTCOME, outcome);
      if (outcome === 'failed' || outcome === 'retried') span.setStatus({ code: SpanStatusCode.ERROR });
    };
    if (job.attempt > job.maxAttempts) {
      // Its workers died (or hung) mid-job every time: a job that kills its worker is not run again.
      await queue.fail(job, workerId, { code: 'worker_lost', message: `the job lost its worker ${job.maxAttempts} times` }).catch(() => {});
      jobFailures.inc({ kind: job.kind, retried: 'false', code: 'worker_lost' });
      observe('failed');
      return;
    }
    // Progress and heartbeats are written one at a time, and only the latest pending progress.
    let pending: JobProgress | undefined;
    let latest: JobProgress | undefined;
    let writing: Promise<void> | undefined;
    const write = (): Promise<void> => {
      if (writing) return writing;
      writing = (async () => {
        try {
          do {
            const next = pending;
            pending = undefined;
            await queue.progress(job, workerId, leaseMs, next);
          } while (pending);
        } catch (err) {
          if (err instanceof JobLeaseLostError) lost.abort(err);
          else logger.warn({ err, jobId: job.id }, 'job progress write failed');
        } finally {
          writing = undefined;
        }
      })();
      return writing;
    };
    const heartbeat = setInterval(() => void write(), Math.max(50, Math.floor(leaseMs / 3)));
    let completed = false;
    const attempt: JobAttempt = {
      job,
      signal,
      report(progress) {
        pending = progress;
        latest = progress;
        void write();
      },
      async checkpoint() {
        // A write begun before this call may have passed before the job was taken away: one begun after it.
        await writing;
        await write();
        if (lost.signal.aborted) throw new JobLeaseLostError(job.id);
      },
      async complete(tx, result) {
        await queue.complete(tx, job, workerId, result, latest);
        completed = true;
      },
    };
    try {
      const handler = options.handlers[job.kind];
      if (!handler) throw new PermanentJobError('unknown_kind', `no handler for jobs of kind ${job.kind}`);
      const result = await handler(attempt);
      clearInterval(heartbeat);
      await writing;
      // A batch's item settles its batch in the same transaction; any other job's completion is
      // one statement, which is a transaction of its own.
      if (!completed) await (job.parentId ? options.db.transaction(async (tx) => attempt.complete(tx, result)) : attempt.complete(options.db, result));
      observe('succeeded');
    } catch (err) {
      clearInterval(heartbeat);
      await writing;
      if (err instanceof JobLeaseLostError || lost.signal.aborted) {
        observe('lost');
        return;
      }
      if (stopping.signal.aborted) {
        // Shutting down: queued again at once for another worker, rather than after its lease.
        await queue.release(job, workerId).catch(() => {});
        observe('lost');
        return;
      }
      const permanent = err instanceof PermanentJobError ? { code: err.code, message: err.message } : options.isPermanent?.(err);
      const error: JobError = permanent ?? { code: 'transient', message: (err as Error)?.message ?? String(err) };
      const retryInMs = permanent ? undefined : Math.min(60_000, options.retryBaseMs * 2 ** (job.attempt - 1));
      const retried = retryInMs !== undefined && job.attempt < job.maxAttempts;
      recordFailure(span, err);
      span.setAttribute('error.type', error.code);
      if (!permanent) logger.warn({ err, jobId: job.id, attempt: job.attempt, retried }, 'job attempt failed');
      // A tenant's corrupt file is its client's to read in the job; the store's own upkeep failing
      // (a backfill's analyzer mismatch) is the operator's, who would otherwise not hear of it.
      else if (job.tenantId === SYSTEM_TENANT_ID)
        logger.error({ jobId: job.id, kind: job.kind, error: permanent }, `${job.kind} job failed: ${permanent.message}`);
      await queue.fail(job, workerId, error, retryInMs).catch((e: unknown) => logger.warn({ err: e, jobId: job.id }, 'job failure write failed'));
      jobFailures.inc({ kind: job.kind, retried: String(retried), code: error.code });
      observe(retried ? 'retried' : 'failed');
    }
  }

  const loops = Array.from({ length: options.concurrency }, () => loop());

  return {
    workerId,
    // One sleeper a job: with every sleeper woken for each job, all but one claimed nothing.
    wake: (jobs = 1) => {
      for (const wake of [...sleepers].slice(0, jobs)) wake();
    },
    async stop() {
      stopping.abort();
      await Promise.allSettled(loops);
    },
  };
}
