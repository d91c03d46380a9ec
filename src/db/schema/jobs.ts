import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * Durable jobs (ingestion, batches of it): the queue itself, claimed with `FOR UPDATE SKIP LOCKED`
 * by any process on the database. A job's effect and its `succeeded` are committed in one
 * transaction, and `attempt` fences a worker that lost its lease (see src/jobs/job-queue.ts).
 */
export const jobs = pgTable(
  'jobs',
  {
    id: uuid('id').primaryKey(),
    tenantId: tenantIdColumn(),
    kind: text('kind').notNull(),
    status: text('status').notNull(),
    /** The user whose data the job carries ('' for none): erasing the user erases the job. */
    userId: text('user_id').notNull().default(''),
    /** The batch this job is an item of; a batch job itself is never claimed, its items are. */
    parentId: uuid('parent_id'),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    /** An uploaded file's bytes, base64: kept out of `payload` so that listings stay small. */
    content: text('content'),
    progress: jsonb('progress').$type<Record<string, unknown>>().notNull(),
    /** Bumped with every progress write: the SSE event id. */
    eventSeq: integer('event_seq').notNull().default(0),
    result: jsonb('result').$type<Record<string, unknown>>(),
    error: jsonb('error').$type<Record<string, unknown>>(),
    attempt: integer('attempt').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(3),
    runAt: timestamp('run_at', { withTimezone: true }).notNull().defaultNow(),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    workerId: text('worker_id'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('jobs_status', sql`${t.status} IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')`),
    index('jobs_tenant_created_idx').on(t.tenantId, t.createdAt, t.id),
    index('jobs_user_idx').on(t.tenantId, t.userId).where(sql`user_id <> ''`),
    index('jobs_parent_idx').on(t.parentId).where(sql`parent_id IS NOT NULL`),
    // The claim's scan: only open jobs are indexed, so the index stays as small as the backlog.
    index('jobs_open_idx').on(t.runAt).where(sql`status IN ('queued', 'running')`),
  ],
);
