import { type SQL, and, asc, eq, sql } from 'drizzle-orm';
import type { AuditActor, AuditLog } from '../audit/audit-types.js';
import { attachmentsOf, deleteUnkeptAttachments } from '../conversations/attachment-store.js';
import { TURN_CORPUS } from '../conversations/turn-corpus.js';
import type { Db, Tx } from '../db/database.js';
import { queryRows } from '../db/query-rows.js';
import { conversations, jobs, memories, memoryHistory, runs, turns } from '../db/schema/index.js';
import { uuidArray } from '../db/sql-arrays.js';
import { MEMORY_CORPUS } from '../memory/memory-corpus.js';
import { defaultAnalyzer } from '../retrieval/bm25/analyzer.js';
import { createCorpusIndex } from '../retrieval/corpus-index.js';
import { DEFAULT_TENANT_ID } from '../tenancy/tenant-id.js';
import { markHistoryOrigins, markMemoryOrigins, memoriesCitingUnmarked } from './erased-origins.js';
import { eraseUserBlocks } from '../blocks/block-erasure.js';

/** What one erasure removed, by kind of row. */
export interface ErasedCounts {
  memories: number;
  conversations: number;
  messages: number;
  /** Rows of the turns corpus (past turns as episodic recall). */
  turns: number;
  /** The user's memories' history events. */
  historyEvents: number;
  runs: number;
  jobs: number;
  /** Images of the user's conversations that no other conversation keeps, and those the user sent that none keeps. */
  attachments: number;
  /** The user's working-memory blocks, of every agent and their own. */
  blocks: number;
  /** Events of those blocks' history. */
  blockEvents: number;
}

/** Rows per transaction, by table. */
export interface ErasureBatchSizes {
  memories: number;
  historyEvents: number;
  /** Conversations per transaction, with their messages, turns, checkpoints and summaries. */
  conversations: number;
  runs: number;
  jobs: number;
}

const DEFAULT_BATCH_SIZES: ErasureBatchSizes = { memories: 500, historyEvents: 2_000, conversations: 50, runs: 500, jobs: 100 };

export interface UserErasureOptions {
  db: Db;
  /** The tenant whose user is erased; nothing of another tenant is read or written. Default `default`. */
  tenantId?: string;
  /** The tenant's audit log, where each erasure is recorded. */
  audit: AuditLog;
  batchSizes?: Partial<ErasureBatchSizes>;
}

export interface EraseOptions {
  actor: AuditActor;
  /** Stops the erasure between two batches: what was committed stays erased, and a second call finishes it. */
  signal?: AbortSignal;
  /** Told after each committed batch, with the counts so far. */
  onBatch?: (erased: Readonly<ErasedCounts>) => void;
}

export interface ErasureResult {
  erased: ErasedCounts;
  /** The audit entry recording this erasure. */
  auditEntryId: number;
}

export interface UserErasure {
  /**
   * Deletes everything of `userId` in the tenant, across agents: memories with their history,
   * conversations with their messages, turns, checkpoints and summaries, runs and jobs; the BM25
   * statistics stay exact. Origins of other memories in the user's conversations lose their
   * quotes. The counts are this call's: what an earlier, interrupted call erased is in its own
   * audit entry.
   */
  erase(userId: string, options: EraseOptions): Promise<ErasureResult>;
}

const noneErased = (): ErasedCounts => ({
  memories: 0,
  conversations: 0,
  messages: 0,
  turns: 0,
  historyEvents: 0,
  runs: 0,
  jobs: 0,
  attachments: 0,
  blocks: 0,
  blockEvents: 0,
});

/**
 * A user's erasure as a sequence of batches, each one transaction: jobs first, so that none
 * queued for the user runs meanwhile; then the origins other memories have in the user's
 * conversations are marked (they are found through those conversations) and the conversations
 * deleted, then the memories, their history events and the runs.
 * The audit entry is written first and its counts move in each batch's transaction, so that an
 * erasure cut short (a crash, a timeout) is on record with exactly what it did; calling again
 * finishes it, since every step selects what is left.
 */
export function createUserErasure(options: UserErasureOptions): UserErasure {
  const { db, audit } = options;
  const tenantId = options.tenantId ?? DEFAULT_TENANT_ID;
  const size = { ...DEFAULT_BATCH_SIZES, ...options.batchSizes };
  // Deletes write no postings: the analyzer plays no part (as in deleteConversationTurns).
  const memoryIndex = createCorpusIndex(MEMORY_CORPUS, defaultAnalyzer);
  const turnIndex = createCorpusIndex(TURN_CORPUS, defaultAnalyzer);
  const inTransaction = <T>(work: (tx: Tx) => Promise<T>) => db.transaction(work);
  const underMemoryLock = <T>(work: (tx: Tx) => Promise<T>) => memoryIndex.write(db, tenantId, false, work);
  const underTurnLock = <T>(work: (tx: Tx) => Promise<T>) => turnIndex.write(db, tenantId, false, work);

  async function erase(userId: string, { actor, signal, onBatch }: EraseOptions): Promise<ErasureResult> {
    // '' is "no user": the agents' shared memories and the conversations without a user.
    if (userId === '') throw new RangeError('a user id is required: the empty one stands for no user');
    signal?.throwIfAborted();
    const erased = noneErased();
    const marked = { memories: 0, historyEvents: 0 };
    const details = (completed: boolean) => ({ erased: { ...erased }, originsMarked: { ...marked }, completed });
    const auditEntryId = await audit.record({ action: 'user.erased', userId, actor, details: details(false) });

    /**
     * One batch in the transaction `transaction` opens: `work` returns what it erased or marked,
     * or null when nothing was left, and the audit entry's counts move in the same transaction.
     * Returns whether there was anything.
     */
    async function step(
      transaction: (work: (tx: Tx) => Promise<boolean>) => Promise<boolean>,
      work: (tx: Tx) => Promise<{ erased?: Partial<ErasedCounts>; marked?: Partial<typeof marked> } | null>,
    ): Promise<boolean> {
      signal?.throwIfAborted();
      const before = { erased: { ...erased }, marked: { ...marked } };
      let did: boolean;
      try {
        did = await transaction(async (tx) => {
          const done = await work(tx);
          if (!done) return false;
          for (const [k, n] of Object.entries(done.erased ?? {})) erased[k as keyof ErasedCounts] += n;
          for (const [k, n] of Object.entries(done.marked ?? {})) marked[k as keyof typeof marked] += n;
          await audit.updateDetails(auditEntryId, details(false), tx);
          return true;
        });
      } catch (error) {
        // Rolled back, and its counts with it.
        Object.assign(erased, before.erased);
        Object.assign(marked, before.marked);
        throw error;
      }
      if (did) onBatch?.({ ...erased });
      return did;
    }

    /** Deletes the rows of `table` that `where` selects, `limit` (the first in `order`) per transaction. */
    const batches = async (key: keyof ErasedCounts, table: SQL, where: SQL, limit: number, order: SQL = sql``) => {
      while (
        await step(inTransaction, async (tx) => {
          const [row] = await queryRows<{ n: number }>(
            tx,
            sql`WITH gone AS (DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table} WHERE ${where} ${order} LIMIT ${limit}) RETURNING 1)
              SELECT count(*)::int AS n FROM gone`,
          );
          const n = Number(row?.n ?? 0);
          return n === 0 ? null : { erased: { [key]: n } };
        })
      );
    };

    // Jobs first, so that none queued for the user runs (and draws memories from a conversation)
    // while the rest goes. A batch's items before the batch, so that none is left behind by the
    // parent that found it. Deleting a running job's row fences its worker: its next write finds
    // no row, and what it was writing is rolled back.
    await batches(
      'jobs',
      sql`${jobs}`,
      sql`tenant_id = ${tenantId} AND (user_id = ${userId} OR parent_id IN (SELECT p.id FROM jobs p WHERE p.tenant_id = ${tenantId} AND p.user_id = ${userId} AND p.user_id <> ''))`,
      size.jobs,
      sql`ORDER BY parent_id IS NULL`,
    );

    // Origins in the user's conversations are found through them, so they are marked before the
    // conversations go: the history's snapshots in one pass, then each batch's memories (and the
    // snapshots written since) just before the batch is deleted.
    const ofUser = and(eq(conversations.tenantId, tenantId), eq(conversations.userId, userId))!;
    const nextConversations = async () =>
      (await db.select({ id: conversations.id }).from(conversations).where(ofUser).orderBy(asc(conversations.id)).limit(size.conversations)).map((r) => r.id);
    let ids = await nextConversations();
    if (ids.length > 0) await step(inTransaction, async (tx) => ({ marked: { historyEvents: await markHistoryOrigins(tx, tenantId, userId) } }));
    // Conversations: their turns leave the turns corpus (its statistics with them) under its lock,
    // as a conversation's delete does; messages, checkpoints and summaries go by cascade. The rows
    // are locked first, so that no turn is appended between the count and the delete.
    while (ids.length > 0) {
      const batch = ids;
      // Read without the lock first: most conversations are cited by no memory outside the user's.
      if (await memoriesCitingUnmarked(db, tenantId, userId, batch)) {
        await step(underMemoryLock, async (tx) => ({ marked: await markMemoryOrigins(tx, tenantId, userId, batch) }));
      }
      await step(underTurnLock, async (tx) => {
        const these = and(ofUser, sql`${conversations.id} = ANY(${uuidArray(batch)})`)!;
        const locked = (await tx.select({ id: conversations.id }).from(conversations).where(these).for('update')).map((r) => r.id);
        if (locked.length === 0) return null;
        const [messages] = await queryRows<{ n: number }>(tx, sql`SELECT count(*)::int AS n FROM messages WHERE conversation_id = ANY(${uuidArray(locked)})`);
        const turnRows = await turnIndex.deleteRows(tx, tenantId, and(eq(turns.tenantId, tenantId), sql`${turns.conversationId} = ANY(${uuidArray(locked)})`)!);
        const images = await attachmentsOf(tx, locked);
        const gone = await tx.delete(conversations).where(these).returning({ id: conversations.id });
        // Their links went by cascade: the images no other conversation keeps go too.
        const attachments = images.length > 0 ? await deleteUnkeptAttachments(tx, tenantId, images) : 0;
        return { erased: { conversations: gone.length, messages: Number(messages?.n ?? 0), turns: turnRows, attachments } };
      });
      ids = await nextConversations();
    }

    // Memories, with their postings and their share of the statistics, under the corpus lock;
    // looked for without it first, so that a user without memories takes no lock.
    const userMemories = and(eq(memories.tenantId, tenantId), eq(memories.userId, userId))!;
    const anyMemory = async () => (await db.select({ id: memories.id }).from(memories).where(userMemories).limit(1)).length > 0;
    while (
      (await anyMemory()) &&
      (await step(underMemoryLock, async (tx) => {
        const ids = (await tx.select({ id: memories.id }).from(memories).where(userMemories).limit(size.memories)).map((r) => r.id);
        if (ids.length === 0) return null;
        return { erased: { memories: await memoryIndex.deleteRows(tx, tenantId, and(userMemories, sql`${memories.id} = ANY(${uuidArray(ids)})`)!) } };
      }))
    );

    // After the memories: a writer (or the expiry sweeper) that got to one first has its event here.
    await batches('historyEvents', sql`${memoryHistory}`, sql`tenant_id = ${tenantId} AND user_id = ${userId}`, size.historyEvents);
    await batches('runs', sql`${runs}`, sql`tenant_id = ${tenantId} AND user_id = ${userId}`, size.runs);
    // Working memory: a user has a few blocks per agent, with their history, in one transaction.
    await step(inTransaction, async (tx) => {
      const gone = await eraseUserBlocks(tx, tenantId, userId);
      return gone.blocks + gone.historyEvents === 0 ? null : { erased: { blocks: gone.blocks, blockEvents: gone.historyEvents } };
    });
    // Images the user sent that no conversation keeps (a turn that failed, or paused and expired, before it was stored).
    await step(inTransaction, async (tx) => {
      const n = await deleteUnkeptAttachments(tx, tenantId, [], userId);
      return n === 0 ? null : { erased: { attachments: n } };
    });

    // The counts the triggers keep by scope and tag are left at zero (their shards summed):
    // scopes named after the user, and tags (the user's words) of the agents it had memories with.
    // A shard row is deleted only as it was read: one a concurrent writer changed meanwhile is
    // kept, which can only leave a count above the rows it bounds, never below.
    await db.execute(sql`
      WITH scopes AS (
        SELECT scope, left(scope, length(scope) - length(${userId}) - 1) AS agent FROM vector_filter_stats
        WHERE table_name = 'memories' AND tenant_id = ${tenantId} AND right(scope, length(${userId}) + 1) = chr(31) || ${userId}
      ), shards AS (
        SELECT scope, tag, shard, rows FROM vector_filter_stats
        WHERE table_name = 'memories' AND tenant_id = ${tenantId} AND (scope IN (SELECT scope FROM scopes) OR scope IN (SELECT agent FROM scopes))
      ), emptied AS (
        SELECT scope, tag FROM shards GROUP BY scope, tag HAVING sum(rows) = 0
      )
      DELETE FROM vector_filter_stats s USING shards r JOIN emptied e ON e.scope = r.scope AND e.tag = r.tag
      WHERE s.table_name = 'memories' AND s.tenant_id = ${tenantId} AND s.scope = r.scope AND s.tag = r.tag
        AND s.shard = r.shard AND s.rows = r.rows`);

    await audit.updateDetails(auditEntryId, details(true));
    return { erased: { ...erased }, auditEntryId };
  }

  return { erase };
}
