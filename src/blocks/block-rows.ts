import { type SQL, and, eq } from 'drizzle-orm';
import type { Db } from '../db/database.js';
import { blockHistory, blocks } from '../db/schema/index.js';
import type { Block, BlockActor, BlockEvent, BlockEventType, BlockScope } from './block-types.js';

// '' is "none" in the key columns, as the memories' user_id: a primary key cannot hold NULL.
export const keyOf = (id: string | null) => id ?? '';
const nullIfNone = (id: string) => (id === '' ? null : id);

export type BlockRow = typeof blocks.$inferSelect;
export type BlockHistoryRow = typeof blockHistory.$inferSelect;

export function toBlock(row: BlockRow): Block {
  return {
    agentId: nullIfNone(row.agentId),
    userId: nullIfNone(row.userId),
    label: row.label,
    value: row.value,
    description: row.description,
    limit: row.charLimit,
    readOnly: row.readOnly,
    schema: row.schema ?? null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toEvent(row: BlockHistoryRow): BlockEvent {
  return {
    id: row.id,
    agentId: nullIfNone(row.agentId),
    userId: nullIfNone(row.userId),
    label: row.label,
    event: row.event as BlockEventType,
    value: row.value,
    description: row.description,
    limit: row.charLimit,
    readOnly: row.readOnly,
    schema: row.schema ?? null,
    status: row.status as BlockEvent['status'],
    quarantineReasons: row.quarantineReasons ?? [],
    actor: row.actor as BlockActor,
    at: row.at,
  };
}

/** The rows of one label in one scope of a tenant. */
export function blockKey(tenantId: string, label: string, scope: BlockScope): SQL {
  return and(eq(blocks.tenantId, tenantId), eq(blocks.agentId, keyOf(scope.agentId)), eq(blocks.userId, keyOf(scope.userId)), eq(blocks.label, label))!;
}

export function historyKey(tenantId: string, label: string, scope: BlockScope): SQL {
  return and(
    eq(blockHistory.tenantId, tenantId),
    eq(blockHistory.agentId, keyOf(scope.agentId)),
    eq(blockHistory.userId, keyOf(scope.userId)),
    eq(blockHistory.label, label),
  )!;
}

/** The fields of a block a write sets, as columns. */
export function blockColumns(block: Pick<Block, 'value' | 'description' | 'limit' | 'readOnly' | 'schema'>) {
  return { value: block.value, description: block.description, charLimit: block.limit, readOnly: block.readOnly, schema: block.schema };
}

/** Records an event with the block as it left it (or, quarantined, as it would have). */
export async function recordEvent(
  tx: Db,
  tenantId: string,
  block: Pick<Block, 'agentId' | 'userId' | 'label'> & Partial<Pick<Block, 'value' | 'description' | 'limit' | 'readOnly' | 'schema'>>,
  event: BlockEventType,
  actor: BlockActor,
  quarantine?: { reasons: readonly string[] },
): Promise<BlockEvent> {
  const [row] = await tx
    .insert(blockHistory)
    .values({
      tenantId,
      agentId: keyOf(block.agentId),
      userId: keyOf(block.userId),
      label: block.label,
      event,
      value: block.value ?? null,
      description: block.description ?? null,
      charLimit: block.limit ?? null,
      readOnly: block.readOnly ?? null,
      schema: block.schema ?? null,
      status: quarantine ? 'quarantined' : 'applied',
      quarantineReasons: quarantine ? [...quarantine.reasons] : null,
      actor,
    })
    .returning();
  return toEvent(row!);
}
