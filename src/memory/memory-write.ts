import { eq, sql } from 'drizzle-orm';
import type { Tx } from '../db/database.js';
import { memories } from '../db/schema/index.js';
import { memoryEventsInsert, recordRemovals } from './memory-history.js';
import {
  type LockedRow,
  type MemoryRow,
  type StoredOrigin,
  type Target,
  memoryColumns,
  originOf,
  sameTags,
  sameTime,
  snapshotOf,
  toMemory,
  withOrigin,
} from './memory-rows.js';
import { type MemoryStoreContext, SYSTEM_ACTOR } from './memory-store-context.js';
import type { MemoryActor, SaveMemoryResult } from './memory-types.js';

/**
 * Writes `target` over `locked` (the row under its key, locked, or none) with its history event,
 * in a transaction of `index.write` or one holding the corpus (`index.lock`). Null when the
 * content changed and no vector for it is at hand.
 */
export type WriteMemory = (
  tx: Tx,
  target: Target,
  locked: LockedRow | undefined,
  vector: number[] | null,
  actor: MemoryActor,
) => Promise<SaveMemoryResult | null>;

/** The one write every save, patch and extraction decision goes through: the row, its BM25 postings, its history. */
export function createMemoryWrite(ctx: MemoryStoreContext): WriteMemory {
  const { index, tenantId } = ctx;
  return async function write(tx, target, locked, vector, actor) {
    const live = locked !== undefined && !locked.expired;
    const indexed = index.termsOf(target.content);
    const scope = { agentId: target.agentId, userId: target.userId };
    const common = {
      tags: target.tags,
      metadata: target.metadata,
      expiresAt: target.expiresAt,
      validFrom: target.validFrom,
      validUntil: target.validUntil,
      validTo: null,
      status: target.status,
      quarantineReasons: target.quarantineReasons,
      updatedAt: sql`now()`,
    };
    const origin = originOf(actor, target.quote, new Date());
    let sources: StoredOrigin[];
    // An expired row still under the key is gone for readers: its end is recorded before it is replaced.
    if (locked?.expired) await recordRemovals(tx, tenantId, 'expired', SYSTEM_ACTOR, eq(memories.id, locked.id));
    let row: MemoryRow & { id: string };
    let reembedded: boolean;
    if (locked && locked.content === target.content) {
      const changed =
        !live ||
        !sameTags(locked.tags, target.tags) ||
        locked.validTo !== null ||
        locked.status !== target.status ||
        !sameTime(locked.expiresAt, target.expiresAt) ||
        !sameTime(locked.validFrom, target.validFrom) ||
        !sameTime(locked.validUntil, target.validUntil) ||
        JSON.stringify(locked.metadata) !== JSON.stringify(target.metadata);
      // The same words said again after they were contradicted or expired: a new origin of them.
      const reasserted = !live || locked.validTo !== null;
      sources = reasserted ? withOrigin(live ? locked.sources : [], origin) : locked.sources;
      const [updated] = await tx
        .update(memories)
        .set({
          ...common,
          sources,
          ...(locked.bm25Length === null ? { bm25Length: indexed.length } : {}),
          ...(live ? {} : { createdAt: sql`now()` }),
        })
        .where(eq(memories.id, locked.id))
        .returning({ ...memoryColumns, id: memories.id });
      row = updated!;
      reembedded = false;
      // Saved before the BM25 index existed: indexed now, since the row is locked anyway.
      if (locked.bm25Length === null) await index.add(tx, tenantId, [{ id: locked.id, ...indexed }]);
      if (!changed) return { memory: toMemory(row), created: false, reembedded };
    } else {
      if (!vector) return null;
      // A new wording: its origin joins those of the words it replaces.
      sources = withOrigin(live ? locked.sources : [], origin);
      if (locked) {
        // The row first, then its postings: its filter counts (kept by a trigger) are locked before
        // any term row, as a new row's insert does, so that two writers never take them in turns.
        // Its content is replaced: its postings and length go with it.
        const [updated] = await tx
          .update(memories)
          .set({
            ...common,
            sources,
            content: target.content,
            embedding: vector,
            bm25Length: indexed.length,
            ...(live ? {} : { createdAt: sql`now()` }),
          })
          .where(eq(memories.id, locked.id))
          .returning({ ...memoryColumns, id: memories.id });
        row = updated!;
        await index.replace(tx, tenantId, { id: row.id, ...indexed }, locked.bm25Length);
      } else {
        // The key is still free: lockRow took it, so no other writer can insert it first.
        const [inserted] = await tx
          .insert(memories)
          .values({
            tenantId,
            ...scope,
            key: target.key,
            content: target.content,
            tags: target.tags,
            metadata: target.metadata,
            sources,
            expiresAt: target.expiresAt,
            validFrom: target.validFrom,
            validUntil: target.validUntil,
            status: target.status,
            quarantineReasons: target.quarantineReasons,
            embedding: vector,
            bm25Length: indexed.length,
          })
          .returning({ ...memoryColumns, id: memories.id });
        row = inserted!;
        await index.add(tx, tenantId, [{ id: row.id, ...indexed }]);
      }
      reembedded = true;
    }
    // Nothing in the transaction reads the event back: it goes with the corpus's last statement.
    await index.deferWrite(
      tx,
      memoryEventsInsert(tx, tenantId, actor, [
        {
          memoryId: row.id,
          ...scope,
          key: target.key,
          event: live ? 'updated' : 'created',
          content: target.content,
          previousContent: live ? locked.content : null,
          tags: target.tags,
          previousTags: live ? locked.tags : null,
          ...snapshotOf(target, sources),
        },
      ]),
    );
    return { memory: toMemory(row), created: !live, reembedded };
  };
}
