import { and, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { queryRows } from '../db/query-rows.js';
import { runs } from '../db/schema/index.js';
import { PAUSED_STATUSES } from './run-types.js';

export interface RunSweep {
  expired: number;
  lost: number;
  /** Images deleted that no conversation keeps and no waiting run names (see `sweepUnkeptAttachments`). */
  attachments: number;
}

/** Images deleted per sweep at most: a backlog goes over several sweeps, each statement short. */
const ATTACHMENT_SWEEP_BATCH = 500;

/**
 * Ends the runs nobody will finish, in every tenant: waiting ones past their expiry (reading one
 * expires it too, but a run nobody reads would keep its state forever), and running ones that have
 * not moved for `lostAfterMs` — their process died mid-turn, since a live turn is bounded far
 * below that by its model timeouts and iterations.
 */
export async function sweepRuns(db: Db, options: { lostAfterMs: number; unkeptAttachmentsAfterMs?: number }): Promise<RunSweep> {
  const expired = await db
    .update(runs)
    .set({ status: 'expired', state: null, expiresAt: null, updatedAt: sql`now()` })
    .where(and(inArray(runs.status, [...PAUSED_STATUSES]), lt(runs.expiresAt, sql`now()`)))
    .returning({ id: runs.id });
  const lost = await db
    .update(runs)
    .set({
      status: 'failed',
      state: null,
      error: { code: 'run_lost', message: 'The server running this turn stopped before it ended' },
      updatedAt: sql`now()`,
    })
    .where(and(inArray(runs.status, ['running']), lt(runs.updatedAt, sql`now() - make_interval(secs => ${options.lostAfterMs / 1000})`)))
    .returning({ id: runs.id });
  const attachments = await sweepUnkeptAttachments(db, options.unkeptAttachmentsAfterMs ?? options.lostAfterMs);
  return { expired: expired.length, lost: lost.length, attachments };
}

/**
 * A turn's images are stored before it runs, and kept by its conversation only once the turn is
 * stored: a turn that failed, was cancelled or expired leaves them kept by nothing (a user's
 * erasure finds those of a named user, nothing finds the others). Deleted here once older than
 * `olderThanMs` (as long as a run lives; storing an image again restarts its age) unless a waiting
 * or resumed run's state still names them. Rows a turn is linking right now are locked and skipped.
 */
export async function sweepUnkeptAttachments(db: Db, olderThanMs: number): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`WITH gone AS (
          DELETE FROM attachments WHERE id IN (
            SELECT a.id FROM attachments a
            WHERE a.created_at < now() - make_interval(secs => ${olderThanMs / 1000})
              AND NOT EXISTS (SELECT 1 FROM conversation_attachments l WHERE l.attachment_id = a.id)
              AND NOT EXISTS (
                SELECT 1 FROM runs r
                WHERE r.status IN ('running', 'requires_action', 'requires_approval', 'paused') AND r.tenant_id = a.tenant_id
                  AND r.state IS NOT NULL AND strpos(r.state::text, a.id::text) > 0)
            LIMIT ${ATTACHMENT_SWEEP_BATCH}
            FOR UPDATE SKIP LOCKED)
          RETURNING 1)
        SELECT count(*)::int AS n FROM gone`,
  );
  return Number(row?.n ?? 0);
}
