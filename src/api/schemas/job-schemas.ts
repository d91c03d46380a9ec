import { z } from 'zod';
import { JOB_STATUSES, TENANT_JOB_KINDS } from '../../jobs/job-types.js';
import { DOCUMENT_LIMITS } from './document-schemas.js';
import { queryInt } from './memory-schemas.js';

/** The job routes' inputs and replies. */

export const jobIdParams = z.strictObject({ id: z.uuid('must be a job id (a UUID)') });

export const listJobsQuery = z.strictObject({
  status: z.enum(JOB_STATUSES).optional(),
  kind: z.enum(TENANT_JOB_KINDS).optional().meta({
    description: "Only jobs of this kind: `ingest` (one document), `batch`, `extraction` (a chat turn's facts into memories), or `import` (`POST /v1/import`).",
  }),
  limit: queryInt(1, DOCUMENT_LIMITS.pageMax).default(DOCUMENT_LIMITS.pageDefault),
  cursor: z.string().max(DOCUMENT_LIMITS.cursorMaxChars).optional(),
});

const countsSchema = z
  .object({
    queued: z.number().int().min(0),
    running: z.number().int().min(0),
    succeeded: z.number().int().min(0),
    failed: z.number().int().min(0),
    cancelled: z.number().int().min(0),
  })
  .meta({ id: 'BatchCounts', description: "A batch's items by status." });

const itemSchema = z
  .object({
    id: z.uuid(),
    status: z.enum(JOB_STATUSES),
    progress: z.object({ stage: z.string(), done: z.number().int().min(0), total: z.number().int().min(0) }),
    result: z.record(z.string(), z.unknown()).nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
  })
  .meta({ id: 'BatchItem' });

export const jobSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(TENANT_JOB_KINDS),
    status: z.enum(JOB_STATUSES),
    progress: z.object({ stage: z.string(), done: z.number().int().min(0), total: z.number().int().min(0) }).meta({
      description:
        '`stage`: `queued`, then `fetch` (URL sources), `parse`, `normalise`, `chunk`, `embed` (`done` of `total` chunks) and `write`; `items` for a batch; `extract` for an extraction.',
    }),
    result: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({
        description:
          'On success: `documentId` and `status` (`created`, `replaced` or `unchanged`) for an ingest; for an extraction, `facts` ' +
          '(decisions), `applied`, `skipped`, `failures` (unusable decisions) and `keys` (the memories written).',
      }),
    error: z
      .object({ code: z.string(), message: z.string() })
      .nullable()
      .meta({ description: 'Why it failed (or the last failure of an attempt that will be retried).' }),
    batchId: z.uuid().nullable().meta({ description: 'The batch this job is an item of.' }),
    attempt: z.number().int().min(0),
    createdAt: z.iso.datetime(),
    startedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
    counts: countsSchema.optional().meta({ description: 'A batch only.' }),
    items: z.array(itemSchema).optional().meta({ description: 'A batch only: its items, in the order given.' }),
  })
  .meta({ id: 'Job' });

export const jobReplySchema = z.object({ job: jobSchema }).meta({ id: 'JobReply' });

export const jobPageSchema = z.object({ items: z.array(jobSchema), nextCursor: z.string().nullable() }).meta({ id: 'JobPage' });

export const jobEventSchema = z
  .object({ job: jobSchema })
  .meta({ id: 'JobEvent', description: '`event: progress` at each change; the last is named by the final status (`succeeded`, `failed`, `cancelled`).' });
