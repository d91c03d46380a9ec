import { type SQL, and, asc, eq, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/database.js';
import { memories, memoryHistory } from '../db/schema/index.js';
import { type StoredOrigin, toOrigins } from './memory-rows.js';
import type { MemoryActor, MemoryEvent, MemoryEventType } from './memory-types.js';

/** One change to record, with the memory as it was and as it is. */
export interface MemoryChangeRecord {
  memoryId: string;
  agentId: string;
  userId: string;
  key: string;
  event: MemoryEventType;
  content: string | null;
  previousContent: string | null;
  tags: readonly string[];
  previousTags: readonly string[] | null;
  /** The rest of the memory as the event leaves it: an `asOf` read rebuilds it from these. */
  metadata: Record<string, unknown>;
  sources: readonly StoredOrigin[];
  validFrom: Date | null;
  validUntil: Date | null;
  expiresAt: Date | null;
  status: string;
  quarantineReasons: readonly string[];
}

/** Records changes in the writer's transaction: a change and its event land together or not at all. */
export async function recordMemoryEvents(tx: Tx, tenantId: string, actor: MemoryActor, records: readonly MemoryChangeRecord[]): Promise<void> {
  if (records.length === 0) return;
  await memoryEventsInsert(tx, tenantId, actor, records);
}

/** The insert of `records`' events, not yet run: for a writer that runs it as part of a later statement. */
export function memoryEventsInsert(tx: Tx, tenantId: string, actor: MemoryActor, records: readonly MemoryChangeRecord[]) {
  return tx.insert(memoryHistory).values(
    records.map((r) => ({
      tenantId,
      memoryId: r.memoryId,
      agentId: r.agentId,
      userId: r.userId,
      key: r.key,
      event: r.event,
      content: r.content,
      previousContent: r.previousContent,
      tags: [...r.tags],
      previousTags: r.previousTags ? [...r.previousTags] : null,
      metadata: r.metadata,
      sources: [...r.sources],
      validFrom: r.validFrom,
      validUntil: r.validUntil,
      expiresAt: r.expiresAt,
      status: r.status,
      quarantineReasons: [...r.quarantineReasons],
      actor: actor as Record<string, unknown>,
    })),
  );
}

/**
 * Records the removal of every memory `where` selects (deleted or expired), read in the same
 * statement that writes the events: run it in the deleting transaction, before the delete.
 */
export async function recordRemovals(tx: Tx, tenantId: string, event: 'deleted' | 'expired', actor: MemoryActor, where: SQL): Promise<void> {
  await tx.execute(sql`
    INSERT INTO ${memoryHistory} (tenant_id, memory_id, agent_id, user_id, key, event, content, previous_content, tags, previous_tags,
      metadata, sources, valid_from, valid_until, expires_at, status, quarantine_reasons, actor)
    SELECT ${tenantId}, ${memories.id}, ${memories.agentId}, ${memories.userId}, ${memories.key}, ${event}, NULL, ${memories.content},
      ${memories.tags}, ${memories.tags}, ${memories.metadata}, ${memories.sources}, ${memories.validFrom}, ${memories.validUntil},
      ${memories.expiresAt}, ${memories.status}, ${memories.quarantineReasons}, ${JSON.stringify(actor)}::jsonb
    FROM ${memories} WHERE ${where}`);
}

/** The events of one key in one scope, oldest first. */
export async function readMemoryHistory(db: Db, tenantId: string, scope: { agentId: string; userId: string; key: string }): Promise<MemoryEvent[]> {
  const rows = await db
    .select()
    .from(memoryHistory)
    .where(
      and(
        eq(memoryHistory.tenantId, tenantId),
        eq(memoryHistory.agentId, scope.agentId),
        eq(memoryHistory.userId, scope.userId),
        eq(memoryHistory.key, scope.key),
      ),
    )
    .orderBy(asc(memoryHistory.id));
  return rows.map((r) => ({
    event: r.event as MemoryEventType,
    content: r.content,
    previousContent: r.previousContent,
    tags: r.tags,
    previousTags: r.previousTags,
    validFrom: r.validFrom,
    validUntil: r.validUntil,
    sources: toOrigins(r.sources),
    actor: r.actor as MemoryActor,
    at: r.at,
  }));
}
