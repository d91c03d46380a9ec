import type { Job } from '../jobs/job-types.js';
import type { BatchView } from '../jobs/job-store.js';

/** A job as the API answers it; a batch with its counts and items. */
export function jobView(job: Job, batch?: BatchView) {
  const view = {
    id: job.id,
    kind: job.kind,
    status: job.status,
    progress: job.progress,
    result: job.result,
    error: job.error,
    batchId: job.parentId,
    attempt: job.attempt,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
  };
  if (!batch) return view;
  return {
    ...view,
    counts: batch.counts,
    items: batch.items.map((item) => ({ id: item.id, status: item.status, progress: item.progress, result: item.result, error: item.error })),
  };
}
