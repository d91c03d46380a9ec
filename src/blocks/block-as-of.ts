import { and, asc, eq, lte } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { blockHistory } from '../db/schema/index.js';
import { historyKey, toEvent } from './block-rows.js';
import type { Block, BlockScope } from './block-types.js';

/**
 * A block as it was at `asOf`, rebuilt from its history: the last applied event up to then
 * (quarantined writes never changed it), null when there was none or it was a deletion. Created
 * is the first event since the block last came into being.
 */
export async function readBlockAsOf(db: Db, tenantId: string, label: string, scope: BlockScope, asOf: Date): Promise<Block | null> {
  const rows = await db
    .select()
    .from(blockHistory)
    .where(and(historyKey(tenantId, label, scope), eq(blockHistory.status, 'applied'), lte(blockHistory.at, asOf)))
    .orderBy(asc(blockHistory.id));
  let block = null as Block | null;
  for (const row of rows) {
    const event = toEvent(row);
    if (event.event === 'deleted' || event.value === null || event.limit === null) {
      block = null;
      continue;
    }
    block = {
      agentId: event.agentId,
      userId: event.userId,
      label,
      value: event.value,
      description: event.description,
      limit: event.limit,
      readOnly: event.readOnly ?? false,
      schema: event.schema,
      createdAt: block?.createdAt ?? event.at,
      updatedAt: event.at,
    };
  }
  return block;
}
