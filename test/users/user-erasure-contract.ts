import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgAuditLog } from '../../src/audit/pg-audit-log.js';
import type { AuditActor } from '../../src/audit/audit-types.js';
import { createPgConversationStore } from '../../src/conversations/pg-conversation-store.js';
import { createTurnIndex } from '../../src/conversations/turn-index.js';
import type { Database, Db } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { jobs, memoryHistory, runs } from '../../src/db/schema/index.js';
import { ensureVectorSpace } from '../../src/db/vector-space.js';
import { createPgMemoryStore } from '../../src/memory/pg-memory-store.js';
import { type ErasedCounts, createUserErasure } from '../../src/users/user-erasure.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import type { DatabaseDriver } from '../support/database-drivers.js';

// Words only one user's data holds; each stems to itself, so the BM25 term tables hold it verbatim too.
const ERASED = 'qqmarkerqq';
const OTHER_USER = 'ppothermarkerpp';
const OTHER_TENANT = 'zzothertenantzz';

const ACTOR: AuditActor = { type: 'api_key', keyId: 'key:test', name: 'erasure suite' };

/** Rows holding `word`, by table, over every table of the public schema read as text. */
async function rowsHolding(db: Db, word: string): Promise<Record<string, number>> {
  const tables = await queryRows<{ table_name: string }>(
    db,
    sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  expect(tables.length).toBeGreaterThan(15);
  const counts: Record<string, number> = {};
  for (const { table_name } of tables) {
    const [row] = await queryRows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM ${sql.identifier(table_name)} t WHERE t::text ILIKE ${`%${word}%`}`);
    if (Number(row!.n) > 0) counts[table_name] = Number(row!.n);
  }
  return counts;
}

/** Where a BM25 index's statistics differ from a recount of its postings and rows; empty when exact. */
async function bm25Drift(db: Db, index: { rows: string; postings: string; termStats: string; corpusStats: string; docColumn: string }) {
  const id = sql.identifier;
  const terms = await queryRows(
    db,
    sql`SELECT coalesce(s.tenant_id, p.tenant_id) AS tenant, coalesce(s.term, p.term) AS term, s.df AS stored, p.df AS counted
      FROM ${id(index.termStats)} s
      FULL JOIN (SELECT tenant_id, term, count(*)::int AS df FROM ${id(index.postings)} GROUP BY tenant_id, term) p
        ON p.tenant_id = s.tenant_id AND p.term = s.term
      WHERE s.df IS DISTINCT FROM p.df`,
  );
  const totals = await queryRows(
    db,
    sql`SELECT s.tenant_id, s.total::int AS stored, coalesce(r.n, 0)::int AS counted, s.total_length::int AS stored_length, coalesce(r.len, 0)::int AS counted_length
      FROM ${id(index.corpusStats)} s
      LEFT JOIN (SELECT tenant_id, count(bm25_length) AS n, sum(bm25_length) AS len FROM ${id(index.rows)} GROUP BY tenant_id) r ON r.tenant_id = s.tenant_id
      WHERE s.total <> coalesce(r.n, 0) OR s.total_length <> coalesce(r.len, 0)`,
  );
  const lengths = await queryRows(
    db,
    sql`SELECT p.${id(index.docColumn)} FROM ${id(index.postings)} p JOIN ${id(index.rows)} r ON r.id = p.${id(index.docColumn)}
      GROUP BY p.${id(index.docColumn)}, r.bm25_length HAVING sum(p.tf) <> r.bm25_length`,
  );
  return { terms, totals, lengths };
}

const MEMORY_INDEX = {
  rows: 'memories',
  postings: 'memory_postings',
  termStats: 'memory_term_stats',
  corpusStats: 'memory_corpus_stats',
  docColumn: 'memory_id',
};
const TURN_INDEX = { rows: 'turns', postings: 'turn_postings', termStats: 'turn_term_stats', corpusStats: 'turn_corpus_stats', docColumn: 'turn_id' };

/** The user erasure (src/users/user-erasure.ts), run by describeOnDrivers on an empty, migrated database of its own. */
export function userErasureContract(driver: DatabaseDriver) {
  describe('user erasure', () => {
    let database: Database | undefined;
    const embedder = createHashEmbedder(64);
    const db = () => database!.db;

    beforeAll(async () => {
      database = await driver.open();
      await ensureVectorSpace(database.db, embedder);
    });
    afterAll(async () => {
      await database?.close();
    });

    interface Seeded {
      conversationIds: string[];
      expected: ErasedCounts;
    }

    /**
     * Everything a user can leave in a tenant, `word` in each of it: memories of two agents (one
     * rewritten, one deleted: history), conversations with tool calls, checkpoints, summaries,
     * indexed turns with fact keys, runs, jobs (a batch whose item names no user).
     */
    async function seedUser(tenantId: string, userId: string, word: string, options: { conversations?: number; memories?: number } = {}): Promise<Seeded> {
      const memories = createPgMemoryStore({ db: db(), embedder, tenantId });
      const store = createPgConversationStore({ db: db(), tenantId });
      const turnIndex = createTurnIndex({ db: db(), embedder, tenantId });
      const memoryCount = options.memories ?? 3;
      for (let i = 0; i < memoryCount; i++) {
        const agentId = i % 2 === 0 ? 'default' : 'helper';
        await memories.save({ key: `fact-${i}`, agentId, userId, content: `${word} fact number ${i}`, tags: [word, 'common'], metadata: { note: word } });
      }
      await memories.patch('fact-0', { agentId: 'default', userId }, { content: `${word} fact number 0, rewritten` });
      await memories.save({ key: 'doomed', userId, content: `${word} said to forget this` });
      await memories.delete('doomed', { userId });

      const conversationIds: string[] = [];
      let messages = 0;
      let turns = 0;
      for (let c = 0; c < (options.conversations ?? 2); c++) {
        const id = randomUUID();
        conversationIds.push(id);
        const agentId = c % 2 === 0 ? 'default' : 'helper';
        await store.appendTurn({
          id,
          agentId,
          userId,
          messages: [
            { message: { role: 'user', content: `My name is ${word} and I like tea` } },
            { message: { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'search_memories', arguments: JSON.stringify({ query: word }) }] } },
            { message: { role: 'tool', toolCallId: 'c1', content: `${word} likes tea` } },
            { message: { role: 'assistant', content: `Hello ${word}, tea it is.`, toolCalls: [] }, metadata: { cited: word } },
          ],
        });
        await store.appendTurn({
          id,
          agentId,
          userId,
          messages: [
            { message: { role: 'user', content: `Remember that ${word} lives in Oslo` } },
            { message: { role: 'assistant', content: `Noted, ${word}.`, toolCalls: [] } },
          ],
        });
        messages += 6;
        await store.saveCheckpoint(id, {
          turn: 1,
          firstSeq: 1,
          lastSeq: 4,
          question: `My name is ${word}`,
          summary: `${word} likes tea`,
          actionableSummary: `Searched for ${word}`,
          source: 'rules',
        });
        await store.saveSummary(id, {
          fromTurn: 1,
          throughTurn: 1,
          layers: [{ level: 'brief', fromTurn: 1, throughTurn: 1, text: `${word} likes tea`, source: 'rules' }],
        });
        turns += await turnIndex.indexConversation(id);
        await turnIndex.addFacts(id, 2, [`${word} lives in Oslo`]);
      }

      await db()
        .insert(runs)
        .values(
          conversationIds.map((conversationId) => ({
            id: randomUUID(),
            tenantId,
            agentId: 'default',
            userId,
            conversationId,
            status: 'requires_action',
            state: { request: { message: `Where does ${word} live?` } },
          })),
        );
      const batchId = randomUUID();
      await db()
        .insert(jobs)
        .values([
          {
            id: randomUUID(),
            tenantId,
            kind: 'extraction',
            status: 'succeeded',
            userId,
            payload: { text: word },
            content: word,
            progress: {},
            result: { facts: [word] },
          },
          { id: batchId, tenantId, kind: 'batch', status: 'queued', userId, payload: { items: 1 }, progress: {} },
          { id: randomUUID(), tenantId, kind: 'extraction', status: 'queued', parentId: batchId, payload: { text: word }, progress: {} },
        ]);

      const [history] = await queryRows<{ n: number }>(
        db(),
        sql`SELECT count(*)::int AS n FROM memory_history WHERE tenant_id = ${tenantId} AND user_id = ${userId}`,
      );
      return {
        conversationIds,
        expected: {
          memories: memoryCount,
          conversations: conversationIds.length,
          messages,
          turns,
          historyEvents: Number(history!.n),
          runs: conversationIds.length,
          jobs: 3,
          attachments: 0,
          blocks: 0,
          blockEvents: 0,
        },
      };
    }

    /** A memory of the agent's shared scope drawn from `conversationId` (with the user's words quoted) and from the API. */
    async function sharedMemoryCiting(tenantId: string, conversationId: string, quote: string) {
      const memories = createPgMemoryStore({ db: db(), embedder, tenantId });
      const saved = await memories.save({ key: 'shared-tea', content: 'Someone on the team likes tea' });
      const sources = [
        { actor: 'extraction', conversationId, turn: 1, quote: { text: quote, start: 11, end: 11 + quote.length }, at: '2025-01-01T00:00:00.000Z' },
        { actor: 'api', at: '2025-01-02T00:00:00.000Z' },
      ];
      await db().execute(sql`UPDATE memories SET sources = ${JSON.stringify(sources)}::jsonb WHERE tenant_id = ${tenantId} AND key = 'shared-tea'`);
      await db()
        .insert(memoryHistory)
        .values({
          tenantId,
          memoryId: (await queryRows<{ id: string }>(db(), sql`SELECT id FROM memories WHERE tenant_id = ${tenantId} AND key = 'shared-tea'`))[0]!.id,
          agentId: 'default',
          userId: '',
          key: 'shared-tea',
          event: 'updated',
          content: saved.memory.content,
          previousContent: saved.memory.content,
          sources,
          actor: { type: 'extraction', conversationId, turn: 1 },
        });
    }

    it('leaves no row holding the user’s words, keeps everyone else’s, and keeps BM25 statistics exact', async () => {
      const tenantId = `t-${randomUUID()}`;
      const otherTenant = `t-${randomUUID()}`;
      const seeded = await seedUser(tenantId, 'alice', ERASED);
      await seedUser(tenantId, 'bob', OTHER_USER);
      // The same user id in another tenant: not this tenant's to erase.
      await seedUser(otherTenant, 'alice', OTHER_TENANT);
      await sharedMemoryCiting(tenantId, seeded.conversationIds[0]!, `My name is ${ERASED}`);
      expect(Object.keys(await rowsHolding(db(), ERASED)).sort()).toEqual(
        expect.arrayContaining([
          'checkpoints',
          'conversation_summaries',
          'jobs',
          'memories',
          'memory_history',
          'memory_postings',
          'memory_term_stats',
          'messages',
          'runs',
          'turn_postings',
          'turn_term_stats',
          'turns',
          'vector_filter_stats',
        ]),
      );
      const othersBefore = { user: await rowsHolding(db(), OTHER_USER), tenant: await rowsHolding(db(), OTHER_TENANT) };

      const audit = createPgAuditLog({ db: db(), tenantId });
      const erasure = createUserErasure({ db: db(), tenantId, audit, batchSizes: { memories: 2, historyEvents: 3, conversations: 1, runs: 1, jobs: 1 } });
      const result = await erasure.erase('alice', { actor: ACTOR });

      expect(result.erased).toEqual(seeded.expected);
      expect(await rowsHolding(db(), ERASED)).toEqual({});
      expect({ user: await rowsHolding(db(), OTHER_USER), tenant: await rowsHolding(db(), OTHER_TENANT) }).toEqual(othersBefore);
      for (const index of [MEMORY_INDEX, TURN_INDEX]) expect(await bm25Drift(db(), index), index.rows).toEqual({ terms: [], totals: [], lengths: [] });
      // Nothing is left under the user's name either, but in the audit log.
      const named = await queryRows(db(), sql`SELECT scope FROM vector_filter_stats WHERE tenant_id = ${tenantId} AND scope LIKE ${'%\u001falice'}`);
      expect(named).toEqual([]);

      const [entry] = (await audit.list()).items;
      expect(entry).toMatchObject({
        action: 'user.erased',
        userId: 'alice',
        actor: ACTOR,
        details: { erased: seeded.expected, originsMarked: { memories: 1, historyEvents: 1 }, completed: true },
      });
    });

    it('keeps a shared memory drawn from the user’s conversation, its origin there marked deleted without its quote', async () => {
      const tenantId = `t-${randomUUID()}`;
      const seeded = await seedUser(tenantId, 'carol', ERASED, { memories: 1, conversations: 1 });
      await sharedMemoryCiting(tenantId, seeded.conversationIds[0]!, `My name is ${ERASED}`);
      await createUserErasure({ db: db(), tenantId, audit: createPgAuditLog({ db: db(), tenantId }) }).erase('carol', { actor: ACTOR });

      const [memory] = await queryRows<{ content: string; sources: unknown[] }>(
        db(),
        sql`SELECT content, sources FROM memories WHERE tenant_id = ${tenantId} AND key = 'shared-tea'`,
      );
      expect(memory!.content).toBe('Someone on the team likes tea');
      expect(memory!.sources).toEqual([
        { actor: 'extraction', conversationId: seeded.conversationIds[0], turn: 1, at: '2025-01-01T00:00:00.000Z', deleted: true },
        { actor: 'api', at: '2025-01-02T00:00:00.000Z' },
      ]);
      // The snapshot its history keeps of it then: marked the same way.
      const snapshots = await queryRows<{ sources: unknown[] | null }>(
        db(),
        sql`SELECT sources FROM memory_history WHERE tenant_id = ${tenantId} AND key = 'shared-tea' AND actor->>'type' = 'extraction'`,
      );
      expect(snapshots.map((s) => s.sources)).toEqual([memory!.sources]);
    });

    it('answers zero counts for a user with no data, and again for one already erased', async () => {
      const tenantId = `t-${randomUUID()}`;
      const audit = createPgAuditLog({ db: db(), tenantId });
      const erasure = createUserErasure({ db: db(), tenantId, audit });
      const none = { memories: 0, conversations: 0, messages: 0, turns: 0, historyEvents: 0, runs: 0, jobs: 0, attachments: 0, blocks: 0, blockEvents: 0 };
      expect((await erasure.erase('nobody', { actor: { type: 'open' } })).erased).toEqual(none);
      // Nothing to erase takes no corpus lock, so no statistics row is made for the tenant.
      expect(await queryRows(db(), sql`SELECT tenant_id FROM memory_corpus_stats WHERE tenant_id = ${tenantId}`)).toEqual([]);
      expect(await queryRows(db(), sql`SELECT tenant_id FROM turn_corpus_stats WHERE tenant_id = ${tenantId}`)).toEqual([]);

      const seeded = await seedUser(tenantId, 'dave', ERASED, { conversations: 1 });
      expect((await erasure.erase('dave', { actor: ACTOR })).erased).toEqual(seeded.expected);
      expect((await erasure.erase('dave', { actor: ACTOR })).erased).toEqual(none);
      const entries = (await audit.list()).items;
      expect(entries.map((e) => [e.userId, e.details.erased, e.details.completed])).toEqual([
        ['dave', none, true],
        ['dave', seeded.expected, true],
        ['nobody', none, true],
      ]);
    });

    it('can be cut short between batches: the part done is on record, and a second call finishes the rest', async () => {
      const tenantId = `t-${randomUUID()}`;
      const seeded = await seedUser(tenantId, 'erin', ERASED, { conversations: 3, memories: 4 });
      await sharedMemoryCiting(tenantId, seeded.conversationIds[2]!, `My name is ${ERASED}`);
      const audit = createPgAuditLog({ db: db(), tenantId });
      const erasure = createUserErasure({ db: db(), tenantId, audit, batchSizes: { conversations: 1, memories: 1 } });

      // Aborted once the first conversation is gone, as a request past its timeout would be.
      const controller = new AbortController();
      const cut = erasure.erase('erin', {
        actor: ACTOR,
        signal: controller.signal,
        onBatch: (erased) => {
          if (erased.conversations === 1) controller.abort(new Error('cut short'));
        },
      });
      await expect(cut).rejects.toThrow('cut short');
      const [interrupted] = (await audit.list()).items;
      expect(interrupted!.details).toMatchObject({ completed: false, erased: { conversations: 1, memories: 0 } });
      const firstCounts = interrupted!.details.erased as ErasedCounts;
      expect(firstCounts.messages).toBe(6);

      const rest = await erasure.erase('erin', { actor: ACTOR });
      expect(rest.erased.conversations).toBe(2);
      const total = Object.fromEntries(Object.entries(rest.erased).map(([k, n]) => [k, n + firstCounts[k as keyof ErasedCounts]]));
      expect(total).toEqual(seeded.expected);
      expect(await rowsHolding(db(), ERASED)).toEqual({});
      for (const index of [MEMORY_INDEX, TURN_INDEX]) expect(await bm25Drift(db(), index), index.rows).toEqual({ terms: [], totals: [], lengths: [] });
      const [shared] = await queryRows<{ sources: { deleted?: boolean }[] }>(
        db(),
        sql`SELECT sources FROM memories WHERE tenant_id = ${tenantId} AND key = 'shared-tea'`,
      );
      expect(shared!.sources[0]!.deleted).toBe(true);
    });

    it('refuses the empty user id, which stands for no user', async () => {
      const tenantId = `t-${randomUUID()}`;
      const erasure = createUserErasure({ db: db(), tenantId, audit: createPgAuditLog({ db: db(), tenantId }) });
      await expect(erasure.erase('', { actor: ACTOR })).rejects.toThrow(RangeError);
    });
  });
}
