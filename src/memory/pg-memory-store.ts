import { randomUUID } from 'node:crypto';
import { type SQL, and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Tx } from '../db/database.js';
import type { AfterBulkWrite } from '../db/table-statistics.js';
import { asUrgentReads } from '../db/urgent-reads.js';
import { memories, memoryHistory } from '../db/schema/index.js';
import { defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { createCorpusIndex } from '../retrieval/corpus-index.js';
import type { CorpusFilter } from '../retrieval/filter.js';
import { filterToSql, validAtSql } from '../retrieval/filter-sql.js';
import { fusionWeightsFor } from '../retrieval/fusion-weights.js';
import { afterCursor, createdAtText, keysetPage } from '../retrieval/keyset-page.js';
import { type TenantCorpusOptions, createRetrievalEngine } from '../retrieval/retrieval-engine.js';
import { searchRows } from '../retrieval/row-search.js';
import { normalizeTags } from '../retrieval/tags.js';
import { TIME_WINDOW_CANDIDATES, favourTimeWindow } from '../retrieval/time-window-boost.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { readTimeWindow } from '../text/time-window.js';
import type { FirewallVerdict, MemoryFirewall } from './firewall/memory-firewall.js';
import { readVersions } from './memory-as-of.js';
import { ValidTimeOrderError } from './valid-time-order-error.js';
import { searchMemoriesAsOf } from './memory-as-of-search.js';
import { MEMORY_CORPUS, memoryFilter, storedUserId } from './memory-corpus.js';
import { readMemoryHistory, recordMemoryEvents, recordRemovals } from './memory-history.js';
import {
  type LockedRow,
  type MemoryRow,
  type StoredOrigin,
  type Target,
  expiryOf,
  memoryColumns,
  markedDeleted,
  normalizedText,
  notExpired,
  originOf,
  sameTags,
  sameTime,
  snapshotOf,
  toMemory,
  withOrigin,
} from './memory-rows.js';
import {
  type AppliedChange,
  DEFAULT_AGENT_ID,
  type MemoryActor,
  type MemoryChange,
  type MemoryEvent,
  type MemoryPatch,
  type MemoryScope,
  type ListMemoriesOptions,
  type Memory,
  type MemoryFilter,
  type MemoryPage,
  type MemorySearchHit,
  type MemoryStore,
  type SaveMemoryInput,
  type SaveMemoryResult,
  type SearchMemoriesOptions,
  type ReadMoment,
  type TagCount,
  type VectorSearchOptions,
} from './memory-types.js';

/** The analyzer must be the one that indexed the stored memories (`indexUnindexedMemories` at start). */
export interface PgMemoryStoreOptions extends TenantCorpusOptions {
  /** Called after a batch save commits, to bring planner statistics up to date (`TableStatistics`). */
  afterBulkWrite?: AfterBulkWrite;
  /** Screens the writes it says to (the model's, extraction's); absent: nothing is screened. */
  firewall?: MemoryFirewall;
}

const API_ACTOR: MemoryActor = Object.freeze({ type: 'api' });
const SYSTEM_ACTOR: MemoryActor = Object.freeze({ type: 'system' });

/** At most this many memories per `saveMany`: one transaction holds the tenant's memory writers. */
export const MAX_BATCH_MEMORIES = 100;

/**
 * A save or patch embeds before its transaction, and tries again when a concurrent writer changed
 * the content meanwhile (the vector must be of the content written); from this attempt on it
 * embeds under the lock instead, holding the tenant's memory writers for the embedder's time.
 */
const EMBED_UNDER_LOCK_FROM_ATTEMPT = 3;
const MAX_WRITE_ATTEMPTS = 5;
const writeAttemptsExhausted = (key: string) =>
  new Error(`memory ${JSON.stringify(key)} was not written: its content kept changing under concurrent writers (${MAX_WRITE_ATTEMPTS} attempts)`);

export function createPgMemoryStore(options: PgMemoryStoreOptions): MemoryStore {
  const { db, embedder } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const analyzer = options.analyzer ?? defaultAnalyzer;
  const weights = Object.freeze({ ...(options.weights ?? fusionWeightsFor(embedder.id)) });
  const engine = createRetrievalEngine({ ...options, analyzer });
  // Taken first by every writer of the tenant's memories: see CorpusIndex.
  const index = createCorpusIndex(MEMORY_CORPUS, analyzer);
  const embedOne = (text: string) => engine.embedQuery(text);
  const where = (filter: CorpusFilter) => filterToSql(filter, MEMORY_CORPUS.filters);
  const scopeOf = (scope: MemoryScope = {}) => ({ agentId: scope.agentId ?? DEFAULT_AGENT_ID, userId: storedUserId(scope.userId) });
  const byKey = (key: string, scope: { agentId: string; userId: string }) =>
    and(eq(memories.tenantId, tenantId), eq(memories.agentId, scope.agentId), eq(memories.userId, scope.userId), eq(memories.key, key))!;

  async function embedMany(texts: readonly string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const vectors = await embedder.embed([...texts]);
    if (vectors.length !== texts.length) throw new Error(`embedder ${embedder.id} returned ${vectors.length} vectors for ${texts.length} texts`);
    return vectors;
  }

  async function lockRow(tx: Tx, key: string, scope: { agentId: string; userId: string }): Promise<LockedRow | undefined> {
    const [row] = await tx
      .select({
        id: memories.id,
        content: memories.content,
        tags: memories.tags,
        metadata: memories.metadata,
        sources: memories.sources,
        validFrom: memories.validFrom,
        validUntil: memories.validUntil,
        bm25Length: memories.bm25Length,
        validTo: memories.validTo,
        expiresAt: memories.expiresAt,
        status: memories.status,
        quarantineReasons: memories.quarantineReasons,
        expired: sql<boolean>`NOT ${notExpired}`,
      })
      .from(memories)
      .where(byKey(key, scope))
      .for('update');
    return row ? { ...row, expired: Boolean(row.expired) } : undefined;
  }

  /**
   * Writes `target` over `locked` (the row under its key, locked, or none) with its history event;
   * the corpus lock is held. Null when the content changed and no vector for it is at hand.
   */
  async function write(tx: Tx, target: Target, locked: LockedRow | undefined, vector: number[] | null, actor: MemoryActor): Promise<SaveMemoryResult | null> {
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
      // Saved before the BM25 index existed: indexed now, since the lock is held anyway.
      if (locked.bm25Length === null) await index.add(tx, tenantId, [{ id: locked.id, ...indexed }]);
      if (!changed) return { memory: toMemory(row), created: false, reembedded };
    } else {
      if (!vector) return null;
      // A new wording: its origin joins those of the words it replaces.
      sources = withOrigin(live ? locked.sources : [], origin);
      if (locked) {
        // Its content is replaced: its postings go, and its length leaves the totals.
        await index.removePostings(tx, tenantId, sql`SELECT ${memories.id} FROM ${memories} WHERE ${eq(memories.id, locked.id)}`);
        if (locked.bm25Length !== null) await index.adjustTotals(tx, tenantId, -1, -locked.bm25Length);
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
      } else {
        // The corpus lock keeps other writers of the tenant out, so the key is still free.
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
      }
      await index.add(tx, tenantId, [{ id: row.id, ...indexed }]);
      reembedded = true;
    }
    await recordMemoryEvents(tx, tenantId, actor, [
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
    ]);
    return { memory: toMemory(row), created: !live, reembedded };
  }

  const ACTIVE: FirewallVerdict = Object.freeze({ status: 'active', reasons: [], injectionScore: null });
  const verdictFields = (verdict: FirewallVerdict) => ({ status: verdict.status, quarantineReasons: [...verdict.reasons] });

  /** The firewall's verdicts on writes by `actor`: all active when it does not screen them. */
  async function screen(texts: readonly string[], actor: MemoryActor, untrusted?: boolean): Promise<FirewallVerdict[]> {
    const firewall = options.firewall;
    if (!firewall?.screens(actor, untrusted)) return texts.map(() => ACTIVE);
    return firewall.screen(texts);
  }

  const targetOf = (input: SaveMemoryInput, verdict: FirewallVerdict): Target => ({
    ...verdictFields(verdict),
    ...scopeOf(input),
    key: input.key,
    content: input.content,
    tags: normalizeTags(input.tags),
    metadata: input.metadata ?? {},
    expiresAt: expiryOf(input) ?? null,
    validFrom: input.validFrom ?? null,
    validUntil: input.validUntil ?? null,
  });

  async function save(input: SaveMemoryInput): Promise<SaveMemoryResult> {
    const actor = input.actor ?? API_ACTOR;
    const [verdict] = await screen([input.content], actor, input.untrusted);
    const target = targetOf(input, verdict!);
    for (let tries = 1; tries <= MAX_WRITE_ATTEMPTS; tries++) {
      const current = await stored(target.key, target);
      // Embed outside the transaction: on PGlite a transaction holds the only connection, and
      // inside it the corpus lock would stall every memory writer for the embedder's time.
      const vector = current?.content === target.content ? null : await embedOne(target.content);
      const saved = await index.write(db, tenantId, true, async (tx) => {
        const locked = await lockRow(tx, target.key, target);
        // Another writer changed the content after we read it: our vector must match our content.
        return write(
          tx,
          target,
          locked,
          vector ?? (tries >= EMBED_UNDER_LOCK_FROM_ATTEMPT && locked?.content !== target.content ? await embedOne(target.content) : null),
          actor,
        );
      });
      if (saved) return saved;
    }
    throw writeAttemptsExhausted(target.key);
  }

  async function saveMany(inputs: readonly SaveMemoryInput[]): Promise<SaveMemoryResult[]> {
    if (inputs.length > MAX_BATCH_MEMORIES) throw new RangeError(`saveMany takes at most ${MAX_BATCH_MEMORIES} memories`);
    // Screened together: a second opinion waits on a model, and the firewall bounds how many at once.
    const verdicts = await Promise.all(inputs.map(async (input) => (await screen([input.content], input.actor ?? API_ACTOR, input.untrusted))[0]!));
    const targets = inputs.map((input, i) => targetOf(input, verdicts[i]!));
    const seen = new Set<string>();
    for (const [i, t] of targets.entries()) {
      const id = JSON.stringify([t.agentId, t.userId, t.key]);
      if (seen.has(id)) throw new RangeError(`memories[${i}] repeats the key ${JSON.stringify(t.key)} of an earlier item`);
      seen.add(id);
    }
    // Every content embedded up front, in batches: the transaction then only writes.
    const vectors = await embedMany(targets.map((t) => t.content));
    const saved = await index.write(db, tenantId, true, async (tx) => {
      const results: SaveMemoryResult[] = [];
      for (const [i, target] of targets.entries()) {
        const locked = await lockRow(tx, target.key, target);
        results.push((await write(tx, target, locked, vectors[i]!, inputs[i]!.actor ?? API_ACTOR))!);
      }
      return results;
    });
    await options.afterBulkWrite?.();
    return saved;
  }

  async function patch(key: string, scopeInput: MemoryScope, changes: MemoryPatch, actor: MemoryActor = API_ACTOR): Promise<Memory | null> {
    const scope = scopeOf(scopeInput);
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
      const outcome = await index.write(db, tenantId, true, async (tx) => {
        const locked = await lockRow(tx, key, scope);
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
      });
      if (outcome === 'gone') return null;
      if (outcome) return outcome.memory;
    }
    throw writeAttemptsExhausted(key);
  }

  async function applyChanges(scopeInput: MemoryScope, changes: readonly MemoryChange[], actor: MemoryActor): Promise<AppliedChange[]> {
    const scope = scopeOf(scopeInput);
    const written = changes.flatMap((c) => (c.op === 'invalidate' ? [] : [c.content]));
    const vectors = await embedMany(written);
    const vectorOf = new Map(written.map((text, i) => [text, vectors[i]!]));
    const verdicts = await screen(written, actor);
    const verdictOf = new Map(written.map((text, i) => [text, verdicts[i]!]));
    const inScope = and(eq(memories.tenantId, tenantId), eq(memories.agentId, scope.agentId), eq(memories.userId, scope.userId), notExpired)!;
    return index.write(db, tenantId, true, async (tx) => {
      const results: AppliedChange[] = [];
      for (const change of changes) {
        if (change.op === 'add') {
          // Read inside the transaction, after the adds before it: a batch cannot add a fact twice either.
          const [same] = await tx
            .select({ key: memories.key, validTo: memories.validTo })
            .from(memories)
            .where(and(inScope, sql`${normalizedText(memories.content)} = ${normalizedText(change.content)}`))
            .orderBy(sql`${memories.validTo} IS NOT NULL`)
            .limit(1);
          if (same && same.validTo === null) {
            results.push({ op: 'add', status: 'skipped', key: same.key, reason: 'the scope already holds this fact' });
            continue;
          }
          if (same) {
            // Said again after it was contradicted: the old memory is valid again, with its history.
            const locked = await lockRow(tx, same.key, scope);
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
        const locked = await lockRow(tx, change.key, scope);
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

  async function history(key: string, scope?: MemoryScope): Promise<MemoryEvent[]> {
    return readMemoryHistory(db, tenantId, { ...scopeOf(scope), key });
  }

  /** Deletes the memories matching `where` with their postings and a `deleted` event each, in the caller's transaction. */
  async function remove(tx: Tx, where: SQL, actor: MemoryActor): Promise<number> {
    await index.lock(tx, tenantId, false);
    await recordRemovals(tx, tenantId, 'deleted', actor, where);
    return index.deleteRows(tx, tenantId, where);
  }

  async function get(key: string, scopeInput?: MemoryScope, moment: ReadMoment = {}): Promise<Memory | null> {
    const scope = scopeOf(scopeInput);
    const validAt = moment.validAt?.toISOString() ?? 'now';
    if (moment.asOf) {
      // Invalidated memories are read too, as without asOf: they keep their key.
      const filter = { ...memoryFilter(tenantId, { agentId: scope.agentId, userId: scope.userId, includeInvalid: true, includeQuarantined: true }), validAt };
      const [version] = await readVersions(db, { filter, asOf: moment.asOf, key });
      return version?.memory ?? null;
    }
    const [row] = await db
      .select(memoryColumns)
      .from(memories)
      .where(and(byKey(key, scope), notExpired, validAtSql(validAt, memories.validFrom, memories.validUntil)));
    return row ? toMemory(row) : null;
  }

  /** The memory under a key, whenever its fact holds: what a write changes. */
  async function stored(key: string, scope?: MemoryScope): Promise<Pick<Memory, 'content'> | null> {
    const [row] = await db
      .select({ content: memories.content })
      .from(memories)
      .where(and(byKey(key, scopeOf(scope)), notExpired));
    return row ?? null;
  }

  async function del(key: string, scope?: MemoryScope, actor: MemoryActor = API_ACTOR): Promise<boolean> {
    const target = and(byKey(key, scopeOf(scope)), notExpired)!;
    return db.transaction(async (tx) => (await remove(tx, target, actor)) > 0);
  }

  /** Both searches, as reads a caller waits for (asUrgentReads): with `vector` given, nothing is embedded. */
  const searchHits = (query: string, opts: SearchMemoriesOptions, vector?: number[]) => asUrgentReads(() => rankedHits(query, opts, vector));

  async function rankedHits(query: string, opts: SearchMemoriesOptions, vector?: number[]): Promise<MemorySearchHit[]> {
    const topK = opts.topK ?? 10;
    const filter = memoryFilter(tenantId, opts);
    // A window re-ranks, so it needs candidates from below the first page.
    const timeWindow = opts.timeWindow !== undefined ? opts.timeWindow : query === '' ? null : readTimeWindow(query, opts.asOf ?? new Date());
    const search = {
      mode: opts.mode ?? 'hybrid',
      filter,
      topK: timeWindow ? Math.max(topK, TIME_WINDOW_CANDIDATES) : topK,
      weights: opts.weights ?? weights,
      ...(opts.minScore !== undefined ? { minScore: opts.minScore } : {}),
      ...(vector ? { vector } : {}),
    };
    const found = opts.asOf
      ? await searchMemoriesAsOf({ db, engine, embedder, analyzer, payload: memoryColumns }, query, { ...search, asOf: opts.asOf })
      : (await searchRows<MemoryRow>(engine, db, MEMORY_CORPUS, query, { ...search, payload: memoryColumns })).map(({ row, score, ranks }) => ({
          memory: toMemory(row),
          score,
          ranks,
        }));
    return favourTimeWindow(found, (h) => h.memory.createdAt, timeWindow).slice(0, topK);
  }

  const search = (query: string, opts: SearchMemoriesOptions = {}) => searchHits(query, opts);

  // The store's own weights and vector mode, whatever else the options object carries.
  const searchByVector = (vector: number[], opts: VectorSearchOptions = {}) => searchHits('', { ...opts, mode: 'vector', weights }, vector);

  async function list(opts: ListMemoriesOptions = {}): Promise<MemoryPage> {
    const limit = opts.limit ?? 50;
    if (opts.asOf) {
      const versions = await readVersions(db, { filter: memoryFilter(tenantId, opts), asOf: opts.asOf, cursor: opts.cursor, limit: limit + 1 });
      return keysetPage(
        versions.map((v) => ({ ...v, id: v.memoryId })),
        limit,
        (v) => v.memory,
      );
    }
    const rows = await db
      .select({ ...memoryColumns, id: memories.id, createdAtText: createdAtText(memories) })
      .from(memories)
      .where(and(where(memoryFilter(tenantId, opts)), afterCursor(opts.cursor, memories)))
      .orderBy(desc(memories.createdAt), desc(memories.id))
      .limit(limit + 1);
    return keysetPage(rows, limit, ({ id: _i, createdAtText: _c, ...row }) => toMemory(row));
  }

  async function tagCounts(filterInput: MemoryFilter = {}): Promise<TagCount[]> {
    const filter = memoryFilter(tenantId, filterInput);
    const tag = sql<string>`t.tag`;
    const rows = await db
      .select({ tag, count: sql<number>`count(*)::int` })
      .from(sql`${memories}, unnest(${memories.tags}) AS t(tag)`)
      .where(where(filter))
      .groupBy(tag)
      .orderBy(desc(sql`count(*)`), asc(tag));
    return rows.map((r) => ({ tag: r.tag, count: Number(r.count) }));
  }

  async function deleteByTags(filterInput: MemoryFilter): Promise<number> {
    // Invalidated and quarantined memories carry the tag too: deleting by tag deletes them as well.
    const filter = memoryFilter(tenantId, { ...filterInput, includeQuarantined: true });
    if (!filter.tags.tagsAny.length && !filter.tags.tagsAll.length) {
      throw new RangeError('deleteByTags needs tagsAny or tagsAll: a filter of excluded tags alone would delete almost everything');
    }
    const { validAt: _validAt, ...anyValidTime } = filter;
    return db.transaction(async (tx) => remove(tx, where({ ...anyValidTime, includeInvalid: true }), API_ACTOR));
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

  async function approve(key: string, scopeInput?: MemoryScope, actor: MemoryActor = API_ACTOR): ReturnType<MemoryStore['approve']> {
    const scope = scopeOf(scopeInput);
    return db.transaction(async (tx) => {
      const locked = await lockRow(tx, key, scope);
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

  return { save, saveMany, patch, applyChanges, history, get, search, searchByVector, delete: del, list, tagCounts, deleteByTags, forgetConversation, approve };
}
