import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import type { ChatMessage } from '../../../src/llm/messages.js';
import type { ConversationExport, ConversationStore } from '../../../src/conversations/conversation-types.js';
import { createPgConversationStore } from '../../../src/conversations/pg-conversation-store.js';
import { type TurnIndex, createTurnIndex } from '../../../src/conversations/turn-index.js';
import { turnBm25Text } from '../../../src/conversations/turn-record.js';
import { type TurnSearch, createTurnSearch } from '../../../src/conversations/turn-search.js';
import type { Database } from '../../../src/db/database.js';
import { queryRows } from '../../../src/db/query-rows.js';
import { ensureVectorSpace } from '../../../src/db/vector-space.js';
import { defaultAnalyzer } from '../../../src/retrieval/bm25/analyzer.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import type { DatabaseDriver } from '../../support/database-drivers.js';

export const embedder = createHashEmbedder(64);

/** A turn's messages as a chat stores them: the question, maybe a tool call and its result, the answer. */
export function exchange(question: string, answer: string, tool?: string): { message: ChatMessage }[] {
  const messages: ChatMessage[] = [{ role: 'user', content: question }];
  if (tool) {
    messages.push({ role: 'assistant', content: 'Let me look.', toolCalls: [{ id: 't1', name: 'search_memories', arguments: '{}' }] });
    messages.push({ role: 'tool', toolCallId: 't1', content: tool });
  }
  messages.push({ role: 'assistant', content: answer, toolCalls: [] });
  return messages.map((message) => ({ message }));
}

export const pick = ({ question, answer }: { question: string; answer: string }) => ({ question, answer });

/** An export of question/answer pairs, each asked at its own time. */
export function exported(agentId: string, turns: { question: string; answer: string; at: string }[], userId?: string): ConversationExport {
  return {
    format: 'memrag.conversation',
    version: 1,
    conversation: { id: randomUUID(), agentId, ...(userId ? { userId } : {}), title: turns[0]!.question, createdAt: turns[0]!.at, updatedAt: turns.at(-1)!.at },
    messages: turns.flatMap((t, i) => [
      { seq: 2 * i + 1, turn: i + 1, role: 'user' as const, content: t.question, createdAt: t.at },
      { seq: 2 * i + 2, turn: i + 1, role: 'assistant' as const, content: t.answer, toolCalls: [], createdAt: t.at },
    ]),
    checkpoints: [],
    summary: null,
  };
}

export type TurnCorpusFixture = ReturnType<typeof useTurnCorpusFixture>;

/**
 * One empty, migrated database per contract run, tenant `acme`'s index, store and search, and the
 * row readers the cases share. Registers the suite's hooks, so call it inside the suite's `describe`.
 */
export function useTurnCorpusFixture(driver: DatabaseDriver) {
  let database: Database | undefined;
  const db = () => database!.db;
  const tenant = (tenantId: string) => {
    const index = createTurnIndex({ db: db(), embedder, tenantId });
    return {
      index,
      store: createPgConversationStore({ db: db(), tenantId, turnIndex: index }) as ConversationStore,
      search: createTurnSearch({ db: db(), embedder, tenantId }) as TurnSearch,
    };
  };
  let acme: { index: TurnIndex; store: ConversationStore; search: TurnSearch };

  beforeAll(async () => {
    database = await driver.open();
    await ensureVectorSpace(database.db, embedder);
    acme = tenant('acme');
  });
  afterAll(async () => {
    await database?.close();
  });

  /** A tenant's turns with what their BM25 text is made of (`turnBm25Text` of the row, `at` in ms). */
  const indexedTurns = (tenantId: string) =>
    queryRows<{
      id: string;
      at_ms: number;
      before: string;
      question: string;
      answer: string;
      after: string;
      facts: string;
      bm25_length: number | null;
      user_id: string;
    }>(
      db(),
      sql`SELECT id::text AS id, (extract(epoch FROM at) * 1000)::float8 AS at_ms, before, question, answer, after, facts, bm25_length, user_id FROM turns WHERE tenant_id = ${tenantId}`,
    );

  /**
   * The BM25 index kept incrementally must equal one rebuilt from the rows (date, neighbours,
   * question and answer): postings, document frequencies, lengths and totals, per tenant.
   */
  async function expectIndexExact(tenantId: string) {
    const rows = await indexedTurns(tenantId);
    const expected: string[] = [];
    const df = new Map<string, number>();
    let totalLength = 0;
    for (const row of rows) {
      let length = 0;
      for (const [term, tf] of defaultAnalyzer.termFrequencies(turnBm25Text({ ...row, at: new Date(Number(row.at_ms)) }))) {
        expected.push(`${row.id} ${term} ${tf}`);
        df.set(term, (df.get(term) ?? 0) + 1);
        length += tf;
      }
      expect(row.bm25_length).toBe(length);
      totalLength += length;
    }
    const postings = await queryRows<{ p: string }>(
      db(),
      sql`SELECT turn_id::text || ' ' || term || ' ' || tf AS p FROM turn_postings WHERE tenant_id = ${tenantId}`,
    );
    expect(postings.map((r) => r.p).sort()).toEqual(expected.sort());
    const terms = await queryRows<{ term: string; df: number }>(db(), sql`SELECT term, df FROM turn_term_stats WHERE tenant_id = ${tenantId}`);
    expect(new Map(terms.map((r) => [r.term, Number(r.df)]))).toEqual(df);
    const [corpus] = await queryRows<{ total: string; total_length: string }>(
      db(),
      sql`SELECT total, total_length FROM turn_corpus_stats WHERE tenant_id = ${tenantId}`,
    );
    expect({ total: Number(corpus?.total ?? 0), totalLength: Number(corpus?.total_length ?? 0) }).toEqual({ total: rows.length, totalLength });
  }

  const rowsOf = (conversationId: string) =>
    queryRows<{
      turn: number;
      question: string;
      answer: string;
      before: string;
      after: string;
      embedded_text: string;
      embedding: string;
      at: Date;
      user_id: string;
    }>(
      db(),
      sql`SELECT turn, question, answer, before, after, embedded_text, embedding::text AS embedding, at, user_id FROM turns WHERE conversation_id = ${conversationId} ORDER BY turn`,
    );

  return { db, tenant, acme: () => acme, indexedTurns, expectIndexExact, rowsOf };
}
