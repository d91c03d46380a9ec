import { sql } from 'drizzle-orm';
import type { Db } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';

/**
 * Waits for the start-up backfill job (src/jobs/maintenance-jobs.ts) to succeed, which a context
 * with workers runs after it starts; throws when it fails or does not end within `ms`.
 */
export async function waitForBackfill(db: Db, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const rows = await queryRows<{ status: string }>(db, sql`SELECT status FROM jobs WHERE kind = 'backfill' ORDER BY created_at DESC LIMIT 1`);
    const status = rows[0]?.status;
    if (status === 'succeeded') return;
    if (status === 'failed' || status === 'cancelled') throw new Error(`the start-up backfill job ${status}`);
    if (Date.now() > until) throw new Error(`the start-up backfill job did not end within ${ms} ms (${status ?? 'none queued'})`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
