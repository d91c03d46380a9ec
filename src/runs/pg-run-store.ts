import { and, desc, eq, getTableColumns, gt, inArray, isNull, not, notInArray, or, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { runs } from '../db/schema/index.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { FOLLOW_UPS_MAX } from './follow-ups-limit.js';
import {
  ENDED_STATUSES,
  type FollowUp,
  type NewRun,
  PAUSED_STATUSES,
  type Run,
  type RunState,
  type RunStatus,
  type RunStore,
  type RunUpdate,
  type RunUsage,
} from './run-types.js';

type RunRow = typeof runs.$inferSelect;

const ZERO_USAGE: RunUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/** A waiting run past its expiry reads as expired at once; the sweeper writes it so later. */
const statusOf = (row: Pick<RunRow, 'status' | 'expiresAt'>): RunStatus =>
  PAUSED_STATUSES.includes(row.status as RunStatus) && row.expiresAt !== null && row.expiresAt.getTime() <= Date.now() ? 'expired' : (row.status as RunStatus);

const toRun = (row: Omit<RunRow, 'tenantId' | 'state' | 'threadKey' | 'reasoning'>): Run => ({
  id: row.id,
  status: statusOf(row),
  agentId: row.agentId,
  userId: row.userId === '' ? null : row.userId,
  conversationId: row.conversationId,
  agentVersion: row.agentVersion,
  usage: { ...ZERO_USAGE, ...row.usage },
  stopReason: row.stopReason,
  error: row.error,
  expiresAt: row.expiresAt,
  followUps: row.followUps ?? [],
  parentRunId: row.parentRunId ?? null,
  role: row.role ?? null,
  createdAt: row.createdAt,
  updatedAt: row.updatedAt,
});

// The reasoning is read only where it is asked for (`load`): it can be long, and is private to those who ask.
const { tenantId: _t, state: _s, threadKey: _k, reasoning: _r, ...runColumns } = getTableColumns(runs);

export interface PgRunStoreOptions {
  db: Db;
  /** The tenant whose runs this store reads and writes, and only those. Default `default`. */
  tenantId?: string;
}

export function createPgRunStore(options: PgRunStoreOptions): RunStore {
  const { db } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const owned = (id: string) => and(eq(runs.id, id), eq(runs.tenantId, tenantId));

  async function create(run: NewRun): Promise<Run> {
    const [row] = await db
      .insert(runs)
      .values({
        id: run.id,
        tenantId,
        agentId: run.agentId,
        userId: run.userId ?? '',
        conversationId: run.conversationId,
        agentVersion: run.agentVersion,
        status: run.status,
        usage: { ...(run.usage ?? ZERO_USAGE) },
        stopReason: run.stopReason ?? null,
        ...(run.threadKey !== undefined ? { threadKey: run.threadKey } : {}),
        ...(run.followUps !== undefined ? { followUps: run.followUps } : {}),
        ...(run.parentRunId !== undefined ? { parentRunId: run.parentRunId } : {}),
        ...(run.role !== undefined ? { role: run.role } : {}),
      })
      .returning(runColumns);
    return toRun(row!);
  }

  async function get(id: string): Promise<Run | null> {
    const [row] = await db.select(runColumns).from(runs).where(owned(id));
    return row ? toRun(row) : null;
  }

  async function load(id: string): Promise<{ run: Run; state: RunState | null; reasoning?: string } | null> {
    const [row] = await db
      .select({ ...runColumns, state: runs.state, reasoning: runs.reasoning })
      .from(runs)
      .where(owned(id));
    if (!row) return null;
    const { state, reasoning, ...rest } = row;
    const run = toRun(rest);
    return { run, state: run.status === 'expired' ? null : ((state as RunState | null) ?? null), ...(reasoning ? { reasoning } : {}) };
  }

  const valuesOf = (change: RunUpdate) => ({
    status: change.status,
    ...(change.usage !== undefined ? { usage: { ...change.usage } } : {}),
    ...(change.stopReason !== undefined ? { stopReason: change.stopReason } : {}),
    ...(change.state !== undefined ? { state: change.state as unknown as Record<string, unknown> | null } : {}),
    ...(change.error !== undefined ? { error: change.error } : {}),
    ...(change.expiresAt !== undefined ? { expiresAt: change.expiresAt } : {}),
    ...(change.threadKey !== undefined ? { threadKey: change.threadKey } : {}),
    ...(change.reasoning !== undefined ? { reasoning: change.reasoning } : {}),
    updatedAt: sql`now()`,
  });

  /** `isEndClaimed` in SQL: a running run whose turn ended and is being stored (see `claimEnd`). */
  const claimed = sql`(${runs.status} = 'running' AND ${runs.stopReason} IS NOT NULL)`;

  async function update(id: string, change: RunUpdate, from?: readonly RunStatus[]): Promise<boolean> {
    const updated = await db
      .update(runs)
      .set(valuesOf(change))
      // A waiting run past its expiry is expired, whatever its row still says: nothing moves it on.
      // Nor is a claimed end undone: its turn is being stored.
      .where(and(owned(id), from ? inArray(runs.status, [...from]) : undefined, or(isNull(runs.expiresAt), gt(runs.expiresAt, sql`now()`)), not(claimed)))
      .returning({ id: runs.id });
    return updated.length > 0;
  }

  async function claimEnd(id: string, stopReason: string): Promise<boolean> {
    const updated = await db
      .update(runs)
      .set({ stopReason, updatedAt: sql`now()` })
      .where(and(owned(id), eq(runs.status, 'running'), isNull(runs.stopReason)))
      .returning({ id: runs.id });
    return updated.length > 0;
  }

  async function endClaimed(id: string, change: RunUpdate): Promise<Run | null> {
    const [row] = await db
      .update(runs)
      .set(valuesOf(change))
      .where(and(owned(id), claimed))
      .returning(runColumns);
    return row ? toRun(row) : null;
  }

  async function statusOfRun(id: string): Promise<RunStatus | null> {
    const [row] = await db.select({ status: runs.status, expiresAt: runs.expiresAt }).from(runs).where(owned(id));
    return row ? statusOf(row) : null;
  }

  async function addFollowUp(id: string, followUp: FollowUp): Promise<boolean> {
    // One statement: the run's completion either reads the list with this entry, or this finds it ended.
    const updated = await db
      .update(runs)
      .set({ followUps: sql`${runs.followUps} || ${JSON.stringify([followUp])}::jsonb`, updatedAt: sql`now()` })
      .where(
        and(
          owned(id),
          notInArray(runs.status, [...ENDED_STATUSES]),
          or(isNull(runs.expiresAt), gt(runs.expiresAt, sql`now()`)),
          sql`jsonb_array_length(${runs.followUps}) < ${FOLLOW_UPS_MAX}`,
        ),
      )
      .returning({ id: runs.id });
    return updated.length > 0;
  }

  async function children(parentRunId: string): Promise<Run[]> {
    const rows = await db
      .select(runColumns)
      .from(runs)
      .where(and(eq(runs.parentRunId, parentRunId), eq(runs.tenantId, tenantId)))
      .orderBy(runs.createdAt, runs.id);
    return rows.map(toRun);
  }

  async function waitingIn(conversationId: string): Promise<string | null> {
    // The partial index on waiting runs answers this without reading any other run of the conversation.
    const [row] = await db
      .select({ id: runs.id })
      .from(runs)
      .where(
        and(
          eq(runs.conversationId, conversationId),
          eq(runs.tenantId, tenantId),
          sql`${runs.status} IN ('requires_action', 'requires_approval', 'paused')`,
          sql`${runs.expiresAt} > now()`,
        ),
      )
      .limit(1);
    return row?.id ?? null;
  }

  async function conversationOfThread(threadKey: string, agentId: string, userId: string | null): Promise<string | null> {
    const [row] = await db
      .select({ conversationId: runs.conversationId })
      .from(runs)
      .where(
        and(
          eq(runs.tenantId, tenantId),
          eq(runs.threadKey, threadKey),
          eq(runs.agentId, agentId),
          eq(runs.userId, userId ?? ''),
          // A run that paused with a key, then failed or was cancelled, stored no turn under it.
          notInArray(runs.status, ['failed', 'cancelled']),
        ),
      )
      .orderBy(desc(runs.createdAt))
      .limit(1);
    return row?.conversationId ?? null;
  }

  return { create, get, load, update, claimEnd, endClaimed, statusOf: statusOfRun, addFollowUp, children, waitingIn, conversationOfThread };
}
