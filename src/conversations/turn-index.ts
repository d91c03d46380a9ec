import { and, asc, eq, gte, inArray, lte, sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/database.js';
import { isForeignKeyViolation } from '../db/foreign-key-violation.js';
import { conversations, messages, turns } from '../db/schema/index.js';
import { intArray, textArray, uuidArray } from '../db/sql-arrays.js';
import type { Embedder } from '../embeddings/embedder.js';
import { type Analyzer, defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { type IndexedTerms, createCorpusIndex } from '../retrieval/corpus-index.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { TURN_CORPUS, turnKeysAnalyzer } from './turn-corpus.js';
import { type TurnMessage, type TurnRecord, turnBm25Text, turnEmbeddedText, turnRecords } from './turn-record.js';

/** The conversation turns are written under, and whose agent and user they keep. */
export interface TurnOwner {
  conversationId: string;
  agentId: string;
  userId: string | null;
}

/** A turn ready to be written: its record, the text its vector was made of, the vector, and its BM25 terms. */
export interface PreparedTurn extends TurnRecord {
  embeddedText: string;
  embedding: number[];
  terms: IndexedTerms;
}

/** A conversation's prepared turns, with the conversation they are written under. */
export interface OwnedTurns {
  owner: TurnOwner;
  prepared: readonly PreparedTurn[];
}

/**
 * The write side of the turns corpus for one tenant. Rows and postings are written in one
 * transaction holding the tenant's corpus shared, once per (conversation, turn): writers of
 * other conversations run side by side, and two writers of one conversation's turns meet on its
 * unique (conversation, turn), where the second skips what the first wrote. Vectors are computed
 * before the transaction (see `prepare`).
 */
export interface TurnIndex {
  /**
   * Indexes the stored conversation's turns that are not indexed yet (those named, or all), and
   * gives the turn before each its `after` (the next question), re-indexing its BM25 postings but
   * not its vector. Returns how many turns were added; 0 when the conversation is not this
   * tenant's, or was deleted meanwhile.
   */
  indexConversation(conversationId: string, options?: { turns?: readonly number[]; signal?: AbortSignal }): Promise<number>;
  /**
   * Embeds turns about to be written. Outside any transaction: on PGlite a transaction holds the
   * only connection, and inside it the corpus lock would stall every writer of turns for the
   * embedder's time.
   */
  prepare(records: readonly TurnRecord[], signal?: AbortSignal): Promise<PreparedTurn[]>;
  /**
   * Writes the prepared turns of one or more conversations in the caller's transaction (an
   * import's): one insert of their rows and one write of their postings for all of them. Returns
   * how many were new.
   */
  write(tx: Tx, conversations: readonly OwnedTurns[]): Promise<number>;
  /**
   * `work` in a transaction for `write`, beside the tenant's other writers of turns (the corpus
   * held shared, its statistics applied last: see `CorpusIndex.write`). After a deadlock it is
   * rolled back and run again, so it must be safe to repeat.
   */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Adds facts an LLM extracted from a stored turn to its BM25 keys (LongMemEval's fact-augmented
   * keys: a later question may name the fact rather than the words said), indexing the turn first
   * if it was not. False when the turn is not this tenant's, or every fact was a key already.
   */
  addFacts(conversationId: string, turn: number, facts: readonly string[], signal?: AbortSignal): Promise<boolean>;
}

export interface TurnIndexOptions {
  db: Db;
  embedder: Embedder;
  /** Default `default`. */
  tenantId?: string;
  /** Must be the one the turns were indexed with (checked against their statistics). */
  analyzer?: Analyzer;
}

// Rows per insert: a turn is 12 parameters, far inside Postgres's 65,535.
const INSERT_BATCH = 1_000;

export function createTurnIndex(options: TurnIndexOptions): TurnIndex {
  const { db, embedder } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const index = createCorpusIndex(TURN_CORPUS, turnKeysAnalyzer(options.analyzer ?? defaultAnalyzer));

  async function prepare(records: readonly TurnRecord[], signal?: AbortSignal): Promise<PreparedTurn[]> {
    if (records.length === 0) return [];
    const texts = records.map(turnEmbeddedText);
    // Bulk: an import's or a backfill's turns come many at once; a chat's one is never cut.
    const vectors = await embedder.embed(texts, { bulk: true, ...(signal && { signal }) });
    // Analyzed here too, not under the corpus lock: the next writer's transaction need not wait for it.
    return records.map((record, i) => ({ ...record, embeddedText: texts[i]!, embedding: vectors[i]!, terms: index.termsOf(turnBm25Text(record)) }));
  }

  /**
   * Inserts the turns with their postings (the corpus held: shared in `transaction`), then gives the turns `refresh`
   * names (of the first conversation: `indexConversation` writes one) the `after` they now have.
   */
  async function writeTurns(tx: Tx, owned: readonly OwnedTurns[], refresh: readonly TurnRecord[]): Promise<number> {
    await index.lock(tx, tenantId, true);
    const entries = owned.flatMap(({ owner, prepared }) => prepared.map((p) => ({ owner, p, terms: p.terms })));
    const keyOf = (conversationId: string, turn: number) => `${conversationId}\u0000${turn}`;
    let added = 0;
    for (let i = 0; i < entries.length; i += INSERT_BATCH) {
      const batch = entries.slice(i, i + INSERT_BATCH);
      const terms = new Map(batch.map((e) => [keyOf(e.owner.conversationId, e.p.turn), e.terms]));
      // Another writer may have indexed some meanwhile (the insert waits for it to commit): those are skipped.
      const inserted = await tx
        .insert(turns)
        .values(
          batch.map(({ owner, p, terms }) => ({
            tenantId,
            conversationId: owner.conversationId,
            agentId: owner.agentId,
            userId: owner.userId ?? '',
            turn: p.turn,
            question: p.question,
            answer: p.answer,
            before: p.before,
            after: p.after,
            embeddedText: p.embeddedText,
            embedding: p.embedding,
            bm25Length: terms.length,
            at: p.at,
          })),
        )
        .onConflictDoNothing()
        .returning({ id: turns.id, conversationId: turns.conversationId, turn: turns.turn });
      await index.add(
        tx,
        tenantId,
        inserted.map((row) => ({ id: row.id, ...terms.get(keyOf(row.conversationId, row.turn))! })),
      );
      added += inserted.length;
    }
    const first = owned[0];
    if (first) await refreshAfter(tx, first.owner.conversationId, refresh);
    return added;
  }

  /** A stored turn as its BM25 keys are made, with what re-keying it changes. */
  type StoredKeys = { id: string; at: Date; before: string; question: string; answer: string; after: string; facts: string; bm25Length: number | null };
  const storedKeys = {
    id: turns.id,
    turn: turns.turn,
    at: turns.at,
    before: turns.before,
    question: turns.question,
    answer: turns.answer,
    after: turns.after,
    facts: turns.facts,
    bm25Length: turns.bm25Length,
  };

  /**
   * Gives stored turns new `after` and `facts`: their BM25 postings and lengths change (in the
   * caller's transaction, under the corpus lock), their vectors do not.
   */
  async function rekey(tx: Tx, stale: readonly (StoredKeys & { next: { after: string; facts: string } })[]): Promise<void> {
    if (stale.length === 0) return;
    const ids = stale.map((s) => s.id);
    const documents = stale.map((s) => ({ id: s.id, ...index.termsOf(turnBm25Text({ ...s, ...s.next })) }));
    await index.removePostings(
      tx,
      tenantId,
      sql`SELECT ${turns.id} FROM ${turns} WHERE ${turns.tenantId} = ${tenantId} AND ${turns.id} = ANY(${uuidArray(ids)})`,
    );
    // `add` counts each row again: the old rows (those that were indexed) and lengths leave the totals.
    const indexed = stale.filter((s) => s.bm25Length !== null);
    await index.adjustTotals(tx, tenantId, -indexed.length, -indexed.reduce((n, s) => n + s.bm25Length!, 0));
    await index.add(tx, tenantId, documents);
    await tx.execute(sql`UPDATE turns t SET after = v.after, facts = v.facts, bm25_length = v.len
      FROM unnest(${uuidArray(ids)}, ${textArray(stale.map((s) => s.next.after))}, ${textArray(stale.map((s) => s.next.facts))},
        ${intArray(documents.map((d) => d.length))}) AS v(id, after, facts, len)
      WHERE t.tenant_id = ${tenantId} AND t.id = v.id`);
  }

  /** Gives stored turns the `after` their record now has. */
  async function refreshAfter(tx: Tx, conversationId: string, records: readonly TurnRecord[]): Promise<void> {
    if (records.length === 0) return;
    const wanted = new Map(records.map((r) => [r.turn, r.after]));
    const stored = await tx
      .select(storedKeys)
      .from(turns)
      .where(and(eq(turns.tenantId, tenantId), eq(turns.conversationId, conversationId), inArray(turns.turn, [...wanted.keys()])));
    await rekey(
      tx,
      stored.filter((s) => wanted.get(s.turn) !== s.after).map((s) => ({ ...s, next: { after: wanted.get(s.turn)!, facts: s.facts } })),
    );
  }

  async function addFacts(conversationId: string, turn: number, facts: readonly string[], signal?: AbortSignal): Promise<boolean> {
    const lines = [...new Set(facts.map((f) => f.trim().replace(/\s+/g, ' ')).filter((f) => f !== ''))];
    if (lines.length === 0) return false;
    // The turn-index hook may not have run yet: the turn is indexed first (a no-op when it was).
    await indexConversation(conversationId, { turns: [turn], ...(signal ? { signal } : {}) });
    return index.write(db, tenantId, true, async (tx) => {
      const [stored] = await tx
        .select(storedKeys)
        .from(turns)
        .where(and(eq(turns.tenantId, tenantId), eq(turns.conversationId, conversationId), eq(turns.turn, turn)));
      if (!stored) return false;
      const known = new Set(stored.facts.split('\n').filter((f) => f !== ''));
      const added = lines.filter((f) => !known.has(f));
      if (added.length === 0) return false;
      for (const f of added) known.add(f);
      await rekey(tx, [{ ...stored, next: { after: stored.after, facts: [...known].join('\n') } }]);
      return true;
    });
  }

  async function indexConversation(conversationId: string, opts: { turns?: readonly number[]; signal?: AbortSignal } = {}): Promise<number> {
    const [owner] = await db
      .select({ agentId: conversations.agentId, userId: conversations.userId, parentConversationId: conversations.parentConversationId })
      .from(conversations)
      .where(and(eq(conversations.id, conversationId), eq(conversations.tenantId, tenantId)));
    // A delegation's turns are its lead's work, not the user's past: never recalled as episodes.
    if (!owner || owner.parentConversationId !== null) return 0;
    const wanted = opts.turns ? new Set(opts.turns) : undefined;
    if (wanted?.size === 0) return 0;
    // The named turns and one turn either side: the before of the first, the after of the last.
    const range = wanted ? and(gte(messages.turn, Math.min(...wanted) - 1), lte(messages.turn, Math.max(...wanted) + 1)) : undefined;
    const rows = await db
      .select({ turn: messages.turn, role: messages.role, content: messages.content, createdAt: messages.createdAt })
      .from(messages)
      .where(and(eq(messages.conversationId, conversationId), range))
      .orderBy(asc(messages.seq));
    const records = turnRecords(rows as TurnMessage[]);
    const targets = wanted ? records.filter((r) => wanted.has(r.turn)) : records;
    if (targets.length === 0) return 0;
    const done = await indexedTurns(
      conversationId,
      targets.map((t) => t.turn),
    );
    const prepared = await prepare(
      targets.filter((t) => !done.has(t.turn)),
      opts.signal,
    );
    opts.signal?.throwIfAborted();
    // The turn before each target now has its `after`; a target indexed before may have missed its own.
    const targetTurns = new Set(targets.map((t) => t.turn));
    const refresh = records.filter((r) => targetTurns.has(r.turn) || targetTurns.has(r.turn + 1));
    try {
      return await index.write(db, tenantId, true, (tx) =>
        writeTurns(tx, [{ owner: { conversationId, agentId: owner.agentId, userId: owner.userId === '' ? null : owner.userId }, prepared }], refresh),
      );
    } catch (error) {
      // Deleted while its turns were being embedded: nothing left to index.
      if (isForeignKeyViolation(error)) return 0;
      throw error;
    }
  }

  async function indexedTurns(conversationId: string, wanted: readonly number[]): Promise<Set<number>> {
    const rows = await db
      .select({ turn: turns.turn })
      .from(turns)
      .where(and(eq(turns.tenantId, tenantId), eq(turns.conversationId, conversationId), inArray(turns.turn, [...wanted])));
    return new Set(rows.map((r) => r.turn));
  }

  return {
    indexConversation,
    prepare,
    write: (tx, conversations) => writeTurns(tx, conversations, []),
    transaction: (work) => index.write(db, tenantId, true, work),
    addFacts,
  };
}

/**
 * Deletes a conversation's turns with their postings, taking them out of the document
 * frequencies and totals, in the caller's transaction (the conversation's delete): the foreign
 * key's cascade alone would leave the statistics counting them.
 */
export async function deleteConversationTurns(tx: Tx, tenantId: string, conversationId: string): Promise<number> {
  // The analyzer plays no part in a delete: no postings are written.
  const index = createCorpusIndex(TURN_CORPUS, defaultAnalyzer);
  await index.lock(tx, tenantId, false);
  return index.deleteRows(tx, tenantId, and(eq(turns.tenantId, tenantId), eq(turns.conversationId, conversationId))!);
}
