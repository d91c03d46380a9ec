import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import type { Embedder } from '../embeddings/embedder.js';
import { setJobQueueDepthSource } from '../observability/job-metrics.js';
import type { Logger } from '../observability/logger.js';
import type { BackfillStep } from '../retrieval/backfill-step.js';
import { type TenantScoped, tenantScoped } from '../tenancy/tenant-scoped.js';
import { ingestJobHandler, permanentIngestError } from './ingest-job.js';
import { createJobLeases } from './job-leases.js';
import { type JobHandler, type JobRunner, startJobRunner } from './job-runner.js';
import { type JobStore, createJobStore } from './job-store.js';
import type { JobKind } from './job-types.js';
import { backfillJobHandler } from './maintenance-jobs.js';
import { createUrlFetcher } from './url-fetcher.js';

export interface JobQueue {
  /** Each tenant's jobs, as the API reads, queues and cancels them. */
  stores: TenantScoped<JobStore>;
  /** This process's workers; undefined when it only queues (WORKERS_IN_PROCESS=false). */
  runner: JobRunner | undefined;
  /** Stops the workers; their jobs in progress go back to the queue when their lease runs out. */
  close(): Promise<void>;
}

export interface JobQueueOptions {
  config: Config;
  database: Database;
  embedder: Embedder;
  logger: Logger;
  /** Whether this process works on jobs. */
  work: boolean;
  /** Handlers of the kinds other features queue (`extraction`), beside ingestion and backfills. */
  handlers?: Partial<Record<JobKind, JobHandler>>;
  /** What the start-up backfill job brings up to date: each corpus's step (src/backfill-steps.ts). */
  backfillSteps: readonly BackfillStep[];
}

/** The job queue over the project's database, with this process's workers when it has any. */
export function createJobQueue({ config, database, embedder, logger, work, handlers, backfillSteps }: JobQueueOptions): JobQueue {
  const queue = createJobLeases(database.db);
  const unsetDepth = setJobQueueDepthSource(() => queue.depth());
  let runner: JobRunner | undefined;
  const stores = tenantScoped((tenantId) =>
    createJobStore({ db: database.db, tenantId, maxAttempts: config.JOB_MAX_ATTEMPTS, onEnqueued: (jobs) => runner?.wake(jobs) }),
  );
  if (work) {
    const fetchSource = createUrlFetcher({
      allowPrivate: config.INGEST_ALLOW_PRIVATE_URLS,
      maxBytes: config.INGEST_URL_MAX_BYTES,
      timeoutMs: config.INGEST_URL_TIMEOUT_MS,
      maxRedirects: config.INGEST_URL_MAX_REDIRECTS,
    });
    // Ingestion and backfills grow the tables in bulk: statistics are brought up to date after each.
    const thenStatistics =
      (handler: JobHandler): JobHandler =>
      async (attempt) => {
        try {
          return await handler(attempt);
        } finally {
          await database.statistics.afterBulkWrite();
        }
      };
    const ingest = thenStatistics(ingestJobHandler({ db: database.db, embedder, fetchSource }));
    runner = startJobRunner({
      queue,
      db: database.db,
      // Not `reembed`: that is the CLI's, run with the new model (src/cli/reembed.ts).
      handlers: { ...handlers, ingest, backfill: thenStatistics(backfillJobHandler({ db: database.db, steps: backfillSteps })) },
      logger,
      concurrency: config.JOB_CONCURRENCY,
      leaseMs: config.JOB_LEASE_MS,
      pollMs: config.JOB_POLL_MS,
      retryBaseMs: config.JOB_RETRY_BASE_MS,
      isPermanent: permanentIngestError,
    });
  }
  return {
    stores,
    runner,
    async close() {
      unsetDepth();
      await runner?.stop();
    },
  };
}
