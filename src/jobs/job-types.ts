/** A durable job: what it is, where it is, and how it ended. */

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Statuses a job never leaves. */
export const FINAL_JOB_STATUSES: readonly JobStatus[] = ['succeeded', 'failed', 'cancelled'];

/**
 * `ingest`, `batch`, `extraction` (a chat turn's facts into memories) and `import` (a large
 * `POST /v1/import`) are a tenant's; `backfill`
 * (the start-up index upkeep) and `reembed` (a model switch) are the store's, queued under
 * SYSTEM_TENANT_ID.
 */
export const JOB_KINDS = ['ingest', 'batch', 'extraction', 'import', 'backfill', 'reembed'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/** The kinds of a tenant's jobs: what the API lists and serves. */
export const TENANT_JOB_KINDS = ['ingest', 'batch', 'extraction', 'import'] as const satisfies readonly JobKind[];

/** The owner of the store's own jobs: not a valid tenant id (":" is refused), so no API key reads them. */
export const SYSTEM_TENANT_ID = ':system';

/** `stage` is a pipeline stage (`parse` … `write`), or `queued` before the first. */
export interface JobProgress {
  stage: string;
  done: number;
  total: number;
}

/** A batch's items by status. */
export interface BatchCounts {
  queued: number;
  running: number;
  succeeded: number;
  failed: number;
  cancelled: number;
}

export interface JobError {
  code: string;
  message: string;
}

export interface Job {
  id: string;
  kind: JobKind;
  status: JobStatus;
  progress: JobProgress;
  result: Record<string, unknown> | null;
  error: JobError | null;
  /** The batch this job is an item of. */
  parentId: string | null;
  attempt: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** Bumped with every change a listener should see: the SSE event id. */
  eventSeq: number;
}

/** A job as a worker claimed it: with its input, and the attempt that fences its writes. */
export interface ClaimedJob extends Job {
  tenantId: string;
  payload: Record<string, unknown>;
  /** The document's text, or an uploaded file's bytes; null for a URL. */
  content: string | Uint8Array | null;
  maxAttempts: number;
}

/** Thrown by a handler for a failure that no retry can fix (a corrupt file, a refused URL). */
export class PermanentJobError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'PermanentJobError';
  }
}

/**
 * The worker no longer owns the job: it was cancelled, or its lease ran out and another worker took
 * it. Whatever the handler was writing is rolled back.
 */
export class JobLeaseLostError extends Error {
  constructor(jobId: string) {
    super(`job ${jobId} is no longer this worker's (cancelled, or taken over after its lease ran out)`);
    this.name = 'JobLeaseLostError';
  }
}
