import { randomUUID } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { memories } from '../db/schema/index.js';
import { normalizeTags } from '../retrieval/tags.js';
import { recordMemoryEvents } from './memory-history.js';
import { lockContents, lockRow } from './memory-lock.js';
import { memoryColumns, normalizedText, snapshotOf, toMemory } from './memory-rows.js';
import { inScope, storedScope } from './memory-scope.js';
import { API_ACTOR, type MemoryStoreContext } from './memory-store-context.js';
import type { AppliedChange, MemoryActor, MemoryChange, MemoryScope, MemoryStore } from './memory-types.js';
import type { WriteMemory } from './memory-write.js';
import { verdictFields } from './memory-write-screen.js';

/** The writes that decide on memories rather than set them: extraction's decisions, a review's approval. */
export function createMemoryChanges(ctx: MemoryStoreContext, write: WriteMemory): Pick<MemoryStore, 'applyChanges' | 'approve'> {
  const { db, index, tenantId } = ctx;

  async function applyChanges(scopeInput: MemoryScope, changes: readonly MemoryChange[], actor: MemoryActor): Promise<AppliedChange[]> {
    const scope = storedScope(scopeInput);
    const written = changes.flatMap((c) => (c.op === 'invalidate' ? [] : [c.content]));
    const vectors = await ctx.embedMany(written);
    const vectorOf = new Map(written.map((text, i) => [text, vectors[i]!]));
    const verdicts = await ctx.screen(written, actor);
    const verdictOf = new Map(written.map((text, i) => [text, verdicts[i]!]));
    const live = inScope(tenantId, scope);
    const added = changes.flatMap((c) => (c.op === 'add' ? [c.content] : []));
    return index.write(db, tenantId, true, async (tx) => {
      // Before any add looks for its fact: concurrent extractions of the same fact meet here.
      await lockContents(tx, tenantId, scope, added);
      const results: AppliedChange[] = [];
      for (const change of changes) {
        if (change.op === 'add') {
          // Read inside the transaction, after the adds before it: a batch cannot add a fact twice either.
          const [same] = await tx
            .select({ key: memories.key, validTo: memories.validTo })
            .from(memories)
            .where(and(live, sql`${normalizedText(memories.content)} = ${normalizedText(change.content)}`))
            .orderBy(sql`${memories.validTo} IS NOT NULL`)
            .limit(1);
          if (same && same.validTo === null) {
            results.push({ op: 'add', status: 'skipped', key: same.key, reason: 'the scope already holds this fact' });
            continue;
          }
          if (same) {
            // Said again after it was contradicted: the old memory is valid again, with its history.
            const locked = await lockRow(tx, tenantId, same.key, scope);
            const saved = await write(
              tx,
              {
                ...scope,
                key: same.key,
                content: locked!.content,
                tags: locked!.tags,
                metadata: locked!.metadata,
                expiresAt: locked!.expiresAt,
                validFrom: change.validFrom === undefined ? locked!.validFrom : change.validFrom,
                validUntil: change.validUntil === undefined ? locked!.validUntil : change.validUntil,
                ...(change.quote ? { quote: change.quote } : {}),
                status: locked!.status === 'quarantined' ? 'quarantined' : 'active',
                quarantineReasons: locked!.quarantineReasons,
              },
              locked,
              null,
              actor,
            );
            results.push({ op: 'add', status: 'applied', key: same.key, memory: saved!.memory, reason: 'an invalidated memory with this fact is valid again' });
            continue;
          }
          const key = randomUUID();
          const saved = await write(
            tx,
            {
              ...scope,
              key,
              content: change.content,
              tags: normalizeTags(change.tags),
              metadata: change.metadata ?? {},
              expiresAt: null,
              validFrom: change.validFrom ?? null,
              validUntil: change.validUntil ?? null,
              ...(change.quote ? { quote: change.quote } : {}),
              ...verdictFields(verdictOf.get(change.content)!),
            },
            undefined,
            vectorOf.get(change.content)!,
            actor,
          );
          results.push({ op: 'add', status: 'applied', key, memory: saved!.memory });
          continue;
        }
        const locked = await lockRow(tx, tenantId, change.key, scope);
        if (!locked || locked.expired || locked.validTo !== null) {
          results.push({ op: change.op, status: 'skipped', key: change.key, reason: 'no live memory with this key in the scope' });
          continue;
        }
        if (change.op === 'update') {
          const tags = normalizeTags([...locked.tags, ...(change.tags ?? [])]);
          const saved = await write(
            tx,
            {
              ...scope,
              key: change.key,
              content: change.content,
              tags,
              metadata: locked.metadata,
              expiresAt: locked.expiresAt,
              validFrom: change.validFrom === undefined ? locked.validFrom : change.validFrom,
              validUntil: change.validUntil === undefined ? locked.validUntil : change.validUntil,
              ...(change.quote ? { quote: change.quote } : {}),
              ...verdictFields(verdictOf.get(change.content)!),
            },
            locked,
            vectorOf.get(change.content)!,
            actor,
          );
          results.push({ op: 'update', status: 'applied', key: change.key, memory: saved!.memory });
          continue;
        }
        const [row] = await tx
          .update(memories)
          .set({ validTo: sql`now()`, updatedAt: sql`now()` })
          .where(eq(memories.id, locked.id))
          .returning({ ...memoryColumns, id: memories.id });
        await recordMemoryEvents(tx, tenantId, actor, [
          {
            memoryId: locked.id,
            ...scope,
            key: change.key,
            event: 'invalidated',
            content: locked.content,
            previousContent: locked.content,
            tags: locked.tags,
            previousTags: locked.tags,
            ...snapshotOf(locked, locked.sources),
          },
        ]);
        results.push({ op: 'invalidate', status: 'applied', key: change.key, memory: toMemory(row!) });
      }
      return results;
    });
  }

  async function approve(key: string, scopeInput?: MemoryScope, actor: MemoryActor = API_ACTOR): ReturnType<MemoryStore['approve']> {
    const scope = storedScope(scopeInput);
    return db.transaction(async (tx) => {
      const locked = await lockRow(tx, tenantId, key, scope);
      if (!locked || locked.expired) return { error: 'not_found' as const };
      if (locked.status !== 'quarantined') return { error: 'not_quarantined' as const };
      const [row] = await tx
        .update(memories)
        .set({ status: 'active', quarantineReasons: [], updatedAt: sql`now()` })
        .where(eq(memories.id, locked.id))
        .returning({ ...memoryColumns, id: memories.id });
      await recordMemoryEvents(tx, tenantId, actor, [
        {
          memoryId: locked.id,
          ...scope,
          key,
          event: 'approved',
          content: locked.content,
          previousContent: locked.content,
          tags: locked.tags,
          previousTags: locked.tags,
          ...snapshotOf({ ...locked, status: 'active', quarantineReasons: [] }, locked.sources),
        },
      ]);
      return { memory: toMemory(row!) };
    });
  }

  return { applyChanges, approve };
}
