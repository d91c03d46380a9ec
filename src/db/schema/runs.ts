import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { tenantIdColumn } from './tenant-id-column.js';

/**
 * A chat turn's run: its status and, while it waits for the client (tool outputs, approvals), the
 * state it resumes from (messages so far, pending calls, usage, sources), so that it survives a
 * restart. The conversation gets the turn only when the run completes.
 */
export const runs = pgTable(
  'runs',
  {
    id: uuid('id').primaryKey(),
    tenantId: tenantIdColumn(),
    agentId: text('agent_id').notNull(),
    userId: text('user_id').notNull().default(''),
    conversationId: uuid('conversation_id').notNull(),
    /** The agent version the run started with; null when the agent had no record (deployment defaults). */
    agentVersion: integer('agent_version'),
    status: text('status').notNull(),
    stopReason: text('stop_reason'),
    usage: jsonb('usage').$type<Record<string, number>>().notNull().default({}),
    state: jsonb('state').$type<Record<string, unknown>>(),
    error: jsonb('error').$type<Record<string, unknown>>(),
    /**
     * For a run of `POST /v1/chat/completions`: a hash of the messages its client holds after its
     * reply, which that client's next request starts with; how a stateless thread finds its conversation.
     */
    threadKey: text('thread_key'),
    /** Messages queued (`POST /v1/runs/:id/messages`, `follow_up`) to start the next turns once this one completes: `[{runId, message}]`. */
    followUps: jsonb('follow_ups').$type<Array<{ runId: string; message: string }>>().notNull().default([]),
    /** The run that started this one: a delegation's lead, a workflow step's workflow run; null for a top-level run. */
    parentRunId: uuid('parent_run_id'),
    /** Under a parent: the role (a delegation) or node (a workflow step) it runs as. */
    role: text('role'),
    /**
     * The model's reasoning over the turn, written when the run completes; kept apart from the
     * answer and the stored turn, and shown by `GET /v1/runs/:id` only with `?includeReasoning=true`.
     */
    reasoning: text('reasoning'),
    /** A paused run left unanswered past this time is expired. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('runs_tenant_created_idx').on(t.tenantId, t.createdAt),
    // A run's children, read with it (`GET /v1/runs/:id`), cancelled with it.
    index('runs_parent_idx').on(t.parentRunId).where(sql`parent_run_id IS NOT NULL`),
    // A conversation's waiting run, looked up before every turn of it; only waiting runs are indexed.
    index('runs_waiting_conversation_idx').on(t.conversationId).where(sql`status IN ('requires_action', 'requires_approval', 'paused')`),
    // A completions thread's next request, looking for the conversation its messages continue.
    index('runs_tenant_thread_key_idx').on(t.tenantId, t.threadKey).where(sql`thread_key IS NOT NULL`),
    // The sweeper's scan: runs that wait or run, by how long they have.
    index('runs_open_idx').on(t.status, t.updatedAt).where(sql`status IN ('running', 'requires_action', 'requires_approval', 'paused')`),
    check('runs_status', sql`${t.status} IN ('running', 'requires_action', 'requires_approval', 'paused', 'completed', 'failed', 'cancelled', 'expired')`),
  ],
);
