import { and } from 'drizzle-orm';
import { memories } from '../db/schema/index.js';
import { normalizeTags } from '../retrieval/tags.js';
import { lockKeys, lockRow } from './memory-lock.js';
import { type LockedRow, type Target, expiryOf, notExpired } from './memory-rows.js';
import { type StoredScope, byKey, storedScope } from './memory-scope.js';
import { API_ACTOR, type MemoryStoreContext } from './memory-store-context.js';
import type { Memory, MemoryActor, MemoryPatch, MemoryScope, MemoryStore, SaveMemoryInput, SaveMemoryResult } from './memory-types.js';
import type { WriteMemory } from './memory-write.js';
import { type FirewallVerdict, verdictFields } from './memory-write-screen.js';
import { ValidTimeOrderError } from './valid-time-order-error.js';

/** At most this many memories per `saveMany`: one transaction holds their keys and term rows until it commits. */
export const MAX_BATCH_MEMORIES = 100;

/**
 * A save or patch embeds before its transaction, and tries again when a concurrent writer changed
 * the content meanwhile (the vector must be of the content written); from this attempt on it
 * embeds under the key's lock instead, holding that key's writers for the embedder's time.
 */
const EMBED_UNDER_LOCK_FROM_ATTEMPT = 3;
const MAX_WRITE_ATTEMPTS = 5;
const writeAttemptsExhausted = (key: string) =>
  new Error(`memory ${JSON.stringify(key)} was not written: its content kept changing under concurrent writers (${MAX_WRITE_ATTEMPTS} attempts)`);

/** The API's writes by key: a save, a batch of them, a patch; each screened, written with its history. */
export function createMemorySaves(ctx: MemoryStoreContext, write: WriteMemory): Pick<MemoryStore, 'save' | 'saveMany' | 'patch'> {
  const { db, index, tenantId, embedOne } = ctx;

  const targetOf = (input: SaveMemoryInput, verdict: FirewallVerdict): Target => ({
    ...verdictFields(verdict),
    ...storedScope(input),
    key: input.key,
    content: input.content,
    tags: normalizeTags(input.tags),
    metadata: input.metadata ?? {},
    expiresAt: expiryOf(input) ?? null,
    validFrom: input.validFrom ?? null,
    validUntil: input.validUntil ?? null,
  });

  /** The memory under a key, whenever its fact holds: what a write changes. */
  async function stored(key: string, scope: StoredScope): Promise<Pick<Memory, 'content'> | null> {
    const [row] = await db
      .select({ content: memories.content })
      .from(memories)
      .where(and(byKey(tenantId, key, scope), notExpired));
    return row ?? null;
  }

  async function save(input: SaveMemoryInput): Promise<SaveMemoryResult> {
    const actor = input.actor ?? API_ACTOR;
    const [verdict] = await ctx.screen([input.content], actor, input.untrusted);
    const target = targetOf(input, verdict!);
    for (let tries = 1; tries <= MAX_WRITE_ATTEMPTS; tries++) {
      const current = await stored(target.key, target);
      // Embed outside the transaction: on PGlite a transaction holds the only connection, and
      // inside it the key's and term rows' locks would stall other writers for the embedder's time.
      const vector = current?.content === target.content ? null : await embedOne(target.content);
      const saved = await index.write(
        db,
        tenantId,
        true,
        async (tx) => {
          const locked = await lockRow(tx, tenantId, target.key, target, { first: index.firstLock(tx) });
          // Another writer changed the content after we read it: our vector must match our content.
          return write(
            tx,
            target,
            locked,
            vector ?? (tries >= EMBED_UNDER_LOCK_FROM_ATTEMPT && locked?.content !== target.content ? await embedOne(target.content) : null),
            actor,
          );
        },
        { sharedByFirstStatement: true },
      );
      if (saved) return saved;
    }
    throw writeAttemptsExhausted(target.key);
  }

  async function saveMany(inputs: readonly SaveMemoryInput[]): Promise<SaveMemoryResult[]> {
    if (inputs.length > MAX_BATCH_MEMORIES) throw new RangeError(`saveMany takes at most ${MAX_BATCH_MEMORIES} memories`);
    // Screened together: a second opinion waits on a model, and the firewall bounds how many at once.
    const verdicts = await Promise.all(inputs.map(async (input) => (await ctx.screen([input.content], input.actor ?? API_ACTOR, input.untrusted))[0]!));
    const targets = inputs.map((input, i) => targetOf(input, verdicts[i]!));
    const seen = new Set<string>();
    for (const [i, t] of targets.entries()) {
      const id = JSON.stringify([t.agentId, t.userId, t.key]);
      if (seen.has(id)) throw new RangeError(`memories[${i}] repeats the key ${JSON.stringify(t.key)} of an earlier item`);
      seen.add(id);
    }
    // Every content embedded up front, in batches: the transaction then only writes.
    const vectors = await ctx.embedMany(targets.map((t) => t.content));
    const saved = await index.write(
      db,
      tenantId,
      true,
      async (tx) => {
        // Every key at once, in the one order every writer takes keys in.
        await lockKeys(tx, tenantId, targets);
        const results: SaveMemoryResult[] = [];
        for (const [i, target] of targets.entries()) {
          const locked = await lockRow(tx, tenantId, target.key, target, { keyTaken: true });
          results.push((await write(tx, target, locked, vectors[i]!, inputs[i]!.actor ?? API_ACTOR))!);
        }
        return results;
      },
      { rows: targets.length },
    );
    await ctx.options.afterBulkWrite?.();
    return saved;
  }

  async function patch(key: string, scopeInput: MemoryScope, changes: MemoryPatch, actor: MemoryActor = API_ACTOR): Promise<Memory | null> {
    const scope = storedScope(scopeInput);
    // A patch keeps the memory's status: releasing a quarantined one is an approval of its own.
    const merge = (
      current: Pick<LockedRow, 'content' | 'tags' | 'metadata' | 'expiresAt' | 'validFrom' | 'validUntil' | 'status' | 'quarantineReasons'>,
    ): Target => {
      let tags = changes.tags !== undefined ? normalizeTags(changes.tags) : current.tags;
      const removed = new Set(normalizeTags(changes.removeTags));
      tags = normalizeTags([...tags.filter((t) => !removed.has(t)), ...normalizeTags(changes.addTags)]);
      const expiresAt = expiryOf(changes);
      const validFrom = changes.validFrom === undefined ? current.validFrom : changes.validFrom;
      const validUntil = changes.validUntil === undefined ? current.validUntil : changes.validUntil;
      if (validFrom && validUntil && validUntil.getTime() <= validFrom.getTime()) throw new ValidTimeOrderError(validFrom, validUntil);
      return {
        ...scope,
        key,
        content: changes.content ?? current.content,
        tags,
        metadata: changes.metadata ?? current.metadata,
        expiresAt: expiresAt === undefined ? current.expiresAt : expiresAt,
        validFrom,
        validUntil,
        status: current.status === 'quarantined' ? 'quarantined' : 'active',
        quarantineReasons: current.quarantineReasons,
      };
    };
    for (let tries = 1; tries <= MAX_WRITE_ATTEMPTS; tries++) {
      const current = await stored(key, scope);
      if (!current) return null;
      const content = changes.content ?? current.content;
      const vector = content === current.content ? null : await embedOne(content);
      const outcome = await index.write(
        db,
        tenantId,
        true,
        async (tx) => {
          const locked = await lockRow(tx, tenantId, key, scope, { first: index.firstLock(tx) });
          if (!locked || locked.expired) return 'gone' as const;
          const target = merge(locked);
          // The patch applies to the row as locked; only its content needs the vector made outside.
          const ready =
            target.content === locked.content
              ? null
              : target.content === content
                ? vector
                : tries >= EMBED_UNDER_LOCK_FROM_ATTEMPT
                  ? await embedOne(target.content)
                  : null;
          return write(tx, target, locked, ready, actor);
        },
        { sharedByFirstStatement: true },
      );
      if (outcome === 'gone') return null;
      if (outcome) return outcome.memory;
    }
    throw writeAttemptsExhausted(key);
  }

  return { save, saveMany, patch };
}
