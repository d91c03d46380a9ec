import { type SQL, and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../db/database.js';
import { memories, memoryHistory } from '../db/schema/index.js';
import { recordRemovals } from './memory-history.js';
import { markedDeleted, notExpired } from './memory-rows.js';
import { byKey, storedScope } from './memory-scope.js';
import { API_ACTOR, type MemoryStoreContext } from './memory-store-context.js';
import type { MemoryActor, MemoryFilter, MemoryScope, MemoryStore } from './memory-types.js';
import { memoryFilter } from './memory-corpus.js';

/** Deleting memories: by key, by tag, and what a deleted conversation leaves of them. */
export function createMemoryRemovals(ctx: MemoryStoreContext): Pick<MemoryStore, 'delete' | 'deleteByTags' | 'forgetConversation'> {
  const { db, index, tenantId } = ctx;

  /** Deletes the memories matching `where` with their postings and a `deleted` event each, in the caller's transaction. */
  async function remove(tx: Tx, where: SQL, actor: MemoryActor): Promise<number> {
    await index.lock(tx, tenantId, false);
    await recordRemovals(tx, tenantId, 'deleted', actor, where);
    return index.deleteRows(tx, tenantId, where);
  }

  async function del(key: string, scope?: MemoryScope, actor: MemoryActor = API_ACTOR): Promise<boolean> {
    const target = and(byKey(tenantId, key, storedScope(scope)), notExpired)!;
    return db.transaction(async (tx) => (await remove(tx, target, actor)) > 0);
  }

  async function deleteByTags(filterInput: MemoryFilter): Promise<number> {
    // Invalidated and quarantined memories carry the tag too: deleting by tag deletes them as well.
    const filter = memoryFilter(tenantId, { ...filterInput, includeQuarantined: true });
    if (!filter.tags.tagsAny.length && !filter.tags.tagsAll.length) {
      throw new RangeError('deleteByTags needs tagsAny or tagsAll: a filter of excluded tags alone would delete almost everything');
    }
    const { validAt: _validAt, ...anyValidTime } = filter;
    return db.transaction(async (tx) => remove(tx, ctx.where({ ...anyValidTime, includeInvalid: true }), API_ACTOR));
  }

  async function forgetConversation(conversationId: string, options: { cascade: boolean; actor?: MemoryActor }): Promise<{ deleted: number; marked: number }> {
    const drawnFrom = and(eq(memories.tenantId, tenantId), sql`${memories.sources} @> ${JSON.stringify([{ conversationId }])}::jsonb`)!;
    // Every origin in the conversation: nothing else vouches for the memory.
    const onlyFrom = sql`NOT EXISTS (SELECT 1 FROM jsonb_array_elements(${memories.sources}) o WHERE o->>'conversationId' IS DISTINCT FROM ${conversationId})`;
    return index.write(db, tenantId, false, async (tx) => {
      const deleted = options.cascade ? await remove(tx, and(drawnFrom, onlyFrom)!, options.actor ?? API_ACTOR) : 0;
      const marked = await tx
        .update(memories)
        .set({ sources: markedDeleted(memories.sources, conversationId) })
        .where(drawnFrom)
        .returning({ id: memories.id });
      await tx.execute(sql`UPDATE ${memoryHistory} SET sources = ${markedDeleted(memoryHistory.sources, conversationId)}
        WHERE ${memoryHistory.tenantId} = ${tenantId} AND ${memoryHistory.sources} @> ${JSON.stringify([{ conversationId }])}::jsonb`);
      return { deleted, marked: marked.length };
    });
  }

  return { delete: del, deleteByTags, forgetConversation };
}
