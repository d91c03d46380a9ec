import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { blockHistory, blocks } from '../db/schema/index.js';
import { keyOf, toBlock, toEvent } from './block-rows.js';
import { checkSettings, checkValue } from './block-rules.js';
import type { Block, BlockEvent } from './block-types.js';

/** A block as an export carries it: its fields and times, and its history oldest first. */
export interface ExportedBlock extends Omit<Block, 'createdAt' | 'updatedAt'> {
  createdAt: string;
  updatedAt: string;
  history: Array<Omit<BlockEvent, 'id' | 'agentId' | 'userId' | 'label' | 'at'> & { at: string }>;
}

/** The tenant's blocks (narrowed to an agent and/or a user), by agent, user and label, a page at a time. */
export async function* exportBlocks(db: Db, tenantId: string, scope: { agentId?: string; userId?: string }, pageSize = 200): AsyncGenerator<ExportedBlock> {
  let after: [string, string, string] | undefined;
  for (;;) {
    const rows = await db
      .select()
      .from(blocks)
      .where(
        and(
          eq(blocks.tenantId, tenantId),
          scope.agentId !== undefined ? eq(blocks.agentId, scope.agentId) : undefined,
          scope.userId !== undefined ? eq(blocks.userId, scope.userId) : undefined,
          after ? sql`(${blocks.agentId}, ${blocks.userId}, ${blocks.label}) > (${after[0]}, ${after[1]}, ${after[2]})` : undefined,
        ),
      )
      .orderBy(asc(blocks.agentId), asc(blocks.userId), asc(blocks.label))
      .limit(pageSize);
    for (const row of rows) {
      const events = await db
        .select()
        .from(blockHistory)
        .where(
          and(
            eq(blockHistory.tenantId, tenantId),
            eq(blockHistory.agentId, row.agentId),
            eq(blockHistory.userId, row.userId),
            eq(blockHistory.label, row.label),
          ),
        )
        .orderBy(asc(blockHistory.id));
      const { createdAt, updatedAt, ...block } = toBlock(row);
      yield {
        ...block,
        createdAt: createdAt.toISOString(),
        updatedAt: updatedAt.toISOString(),
        history: events.map((e) => {
          const { id: _id, agentId: _a, userId: _u, label: _l, at, ...event } = toEvent(e);
          return { ...event, at: at.toISOString() };
        }),
      };
    }
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1]!;
    after = [last.agentId, last.userId, last.label];
  }
}

/** History events per INSERT of an import. */
export const IMPORT_HISTORY_CHUNK = 1_000;

/**
 * One exported block into the tenant, with its history and times, in one transaction; false when
 * the tenant holds a block of that scope and label already (left as it is). Refused (thrown) when
 * the block breaks its own limit or schema.
 */
export async function importBlock(db: Db, tenantId: string, block: ExportedBlock): Promise<{ imported: boolean; historyEvents: number }> {
  checkSettings(block);
  checkValue(block, block.value, undefined);
  return db.transaction(async (tx) => {
    const [made] = await tx
      .insert(blocks)
      .values({
        tenantId,
        agentId: keyOf(block.agentId),
        userId: keyOf(block.userId),
        label: block.label,
        value: block.value,
        description: block.description,
        charLimit: block.limit,
        readOnly: block.readOnly,
        schema: block.schema,
        createdAt: new Date(block.createdAt),
        updatedAt: new Date(block.updatedAt),
      })
      .onConflictDoNothing()
      .returning({ label: blocks.label });
    if (!made) return { imported: false, historyEvents: 0 };
    // In chunks: one INSERT of every event would pass Postgres's 65,535 bind parameters (14 a row)
    // at a few thousand events.
    for (let from = 0; from < block.history.length; from += IMPORT_HISTORY_CHUNK) {
      await tx.insert(blockHistory).values(
        block.history.slice(from, from + IMPORT_HISTORY_CHUNK).map((e) => ({
          tenantId,
          agentId: keyOf(block.agentId),
          userId: keyOf(block.userId),
          label: block.label,
          event: e.event,
          value: e.value,
          description: e.description,
          charLimit: e.limit,
          readOnly: e.readOnly,
          schema: e.schema,
          status: e.status,
          quarantineReasons: e.quarantineReasons.length > 0 || e.status !== 'applied' ? e.quarantineReasons : null,
          actor: e.actor,
          at: new Date(e.at),
        })),
      );
    }
    return { imported: true, historyEvents: block.history.length };
  });
}
