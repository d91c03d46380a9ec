import { getTableColumns } from 'drizzle-orm';
import { jobs } from '../db/schema/index.js';
import type { Job, JobError, JobKind, JobProgress, JobStatus } from './job-types.js';

export type JobRow = typeof jobs.$inferSelect;

const { payload: _p, content: _c, ...listedColumns } = getTableColumns(jobs);

/** The columns a job is read with: not its input, which may be a whole file. */
export const jobColumns = listedColumns;

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

export function toJob(row: Omit<JobRow, 'payload' | 'content'>): Job {
  return {
    id: row.id,
    kind: row.kind as JobKind,
    status: row.status as JobStatus,
    progress: row.progress as unknown as JobProgress,
    result: row.result ?? null,
    error: (row.error as unknown as JobError | null) ?? null,
    parentId: row.parentId,
    attempt: row.attempt,
    createdAt: iso(row.createdAt)!,
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
    eventSeq: row.eventSeq,
  };
}

/** Where a job stands before any worker has touched it. */
export const QUEUED_PROGRESS: JobProgress = { stage: 'queued', done: 0, total: 0 };
