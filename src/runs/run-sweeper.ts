import { and, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { runs } from '../db/schema/index.js';
import { PAUSED_STATUSES } from './run-types.js';

export interface RunSweep {
  expired: number;
  lost: number;
}

/**
 * Ends the runs nobody will finish, in every tenant: waiting ones past their expiry (reading one
 * expires it too, but a run nobody reads would keep its state forever), and running ones that have
 * not moved for `lostAfterMs` — their process died mid-turn, since a live turn is bounded far
 * below that by its model timeouts and iterations.
 */
export async function sweepRuns(db: Db, options: { lostAfterMs: number }): Promise<RunSweep> {
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
  return { expired: expired.length, lost: lost.length };
}
