import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/llm/messages.js';
import type { StructuralSummary } from '../../src/compaction/structural-summary.js';
import type { TurnCheckpoint } from '../../src/compaction/turn-checkpoint.js';
import { ConversationNotFoundError, type ConversationStore } from '../../src/conversations/conversation-types.js';
import { createPgConversationStore } from '../../src/conversations/pg-conversation-store.js';
import type { Database } from '../../src/db/database.js';
import { InvalidCursorError } from '../../src/retrieval/cursor.js';
import type { DatabaseDriver } from '../support/database-drivers.js';

const turnOne: ChatMessage[] = [
  { role: 'user', content: 'What tea does Alice like?\nShe said so yesterday.' },
  { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'search_memories', arguments: '{"query":"tea"}' }] },
  { role: 'tool', toolCallId: 'c1', content: 'Alice prefers green tea' },
  { role: 'tool', toolCallId: 'c1b', content: 'Error: timed out', isError: true },
  { role: 'assistant', content: 'Green tea [1].', toolCalls: [] },
];

const checkpoint = (turn: number, summary: string): TurnCheckpoint => ({
  turn,
  firstSeq: 1,
  lastSeq: 5,
  question: 'What tea does Alice like?',
  summary,
  actionableSummary: 'Searched memories for tea.',
  source: 'llm',
});

const summary = (throughTurn: number): StructuralSummary => ({
  fromTurn: 2,
  throughTurn,
  layers: [{ level: 'detailed', fromTurn: 2, throughTurn, text: `Turns up to ${throughTurn}.`, source: 'llm' }],
});

/** The ConversationStore contract, run by describeOnDrivers on an empty, migrated database of its own. */
export function conversationStoreContract(driver: DatabaseDriver) {
  describe('ConversationStore contract', () => {
    let database: Database | undefined;
    let store: ConversationStore;

    beforeAll(async () => {
      database = await driver.open();
      store = createPgConversationStore({ db: database.db });
    });
    afterAll(async () => {
      await database?.close();
    });

    // The turn goes in as jsonb, which refuses what a text column stores as U+FFFD.
    it('stores a reply holding an unpaired surrogate, as a text column would', async () => {
      const id = randomUUID();
      await store.appendTurn({
        id,
        agentId: 'alice',
        messages: [
          { message: { role: 'user', content: 'Say something' } },
          { message: { role: 'assistant', content: 'cut emoji \ud83d', toolCalls: [] }, metadata: { note: 'half \ud83d' } },
        ],
      });
      const loaded = await store.load(id, 'alice');
      expect(loaded!.messages[1]!.message.content).toBe('cut emoji \ufffd');
    });

    it('appends turns with consecutive numbers and reads them back exactly', async () => {
      const id = randomUUID();
      const first = await store.appendTurn({ id, agentId: 'alice', messages: turnOne.map((message) => ({ message })) });
      expect(first).toMatchObject({ turn: 1, firstSeq: 1, lastSeq: 5, created: true });
      expect(first.conversation).toMatchObject({
        id,
        agentId: 'alice',
        title: 'What tea does Alice like? She said so yesterday.',
        turnCount: 1,
        messageCount: 5,
      });
      const second = await store.appendTurn({
        id,
        agentId: 'alice',
        messages: [
          { message: { role: 'user', content: 'Thanks' } },
          { message: { role: 'assistant', content: 'You are welcome.', toolCalls: [] }, metadata: { citations: [] } },
        ],
      });
      expect(second).toMatchObject({ turn: 2, firstSeq: 6, lastSeq: 7, created: false });
      expect(second.conversation.createdAt).toBeInstanceOf(Date);
      expect(second.conversation.updatedAt.getTime()).toBeGreaterThanOrEqual(first.conversation.createdAt.getTime());

      const loaded = await store.load(id, 'alice');
      expect(loaded!.conversation).toMatchObject({ turnCount: 2, messageCount: 7 });
      expect(loaded!.messages.map((m) => [m.seq, m.turn])).toEqual([
        [1, 1],
        [2, 1],
        [3, 1],
        [4, 1],
        [5, 1],
        [6, 2],
        [7, 2],
      ]);
      expect(loaded!.messages.slice(0, 5).map((m) => m.message)).toEqual(turnOne);
      expect(loaded!.messages[6]!.metadata).toEqual({ citations: [] });
      expect(loaded!.checkpoints).toEqual([]);
      expect(loaded!.summary).toBeNull();
    });

    it('scopes every operation to the owning agent', async () => {
      const id = randomUUID();
      await store.appendTurn({ id, agentId: 'alice', messages: [{ message: { role: 'user', content: 'hi' } }] });
      expect(await store.get(id, 'bob')).toBeNull();
      expect(await store.load(id, 'bob')).toBeNull();
      expect(await store.export(id, 'bob')).toBeNull();
      expect(await store.delete(id, 'bob')).toBe(false);
      await expect(store.appendTurn({ id, agentId: 'bob', messages: [{ message: { role: 'user', content: 'mine now' } }] })).rejects.toBeInstanceOf(
        ConversationNotFoundError,
      );
      expect((await store.load(id, 'alice'))!.messages).toHaveLength(1);
    });

    it('keeps a conversation to the user of its first turn, and lists by user', async () => {
      const id = randomUUID();
      const first = await store.appendTurn({ id, agentId: 'uma', userId: 'u-1', messages: [{ message: { role: 'user', content: 'hi' } }] });
      expect(first.conversation.userId).toBe('u-1');
      expect(await store.ownedByOther(id, 'uma')).toBe(false);
      expect(await store.ownedByOther(id, 'uma', 'u-1')).toBe(false);
      expect(await store.ownedByOther(id, 'uma', 'u-2')).toBe(true);
      expect(await store.ownedByOther(id, 'uma', null)).toBe(true);
      for (const userId of ['u-2', null, undefined]) {
        await expect(store.appendTurn({ id, agentId: 'uma', userId, messages: [{ message: { role: 'user', content: 'mine now' } }] })).rejects.toBeInstanceOf(
          ConversationNotFoundError,
        );
      }
      const anonymous = randomUUID();
      expect(
        (await store.appendTurn({ id: anonymous, agentId: 'uma', messages: [{ message: { role: 'user', content: 'anyone' } }] })).conversation.userId,
      ).toBeNull();
      await expect(
        store.appendTurn({ id: anonymous, agentId: 'uma', userId: 'u-1', messages: [{ message: { role: 'user', content: 'x' } }] }),
      ).rejects.toBeInstanceOf(ConversationNotFoundError);
      expect((await store.load(id, 'uma'))!.messages).toHaveLength(1);
      expect((await store.list({ agentId: 'uma', userId: 'u-1' })).items.map((c) => c.id)).toEqual([id]);
      expect((await store.list({ agentId: 'uma', userId: '' })).items.map((c) => c.id)).toEqual([anonymous]);
      expect((await store.list({ agentId: 'uma' })).items).toHaveLength(2);

      const exported = (await store.export(id, 'uma'))!;
      expect(exported.conversation.userId).toBe('u-1');
      expect((await store.import(exported, 'uma')).userId).toBe('u-1');
      expect((await store.import(exported, 'uma', 'u-3')).userId).toBe('u-3');
      expect((await store.import(exported, 'uma', null)).userId).toBeNull();
      const { userId: _dropped, ...older } = exported.conversation;
      expect((await store.import({ ...exported, conversation: older }, 'uma')).userId).toBeNull();
    });

    it('numbers concurrent turns of one conversation without gaps or collisions', async () => {
      const id = randomUUID();
      const turns = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          store.appendTurn({
            id,
            agentId: 'alice',
            messages: [{ message: { role: 'user', content: `q${i}` } }, { message: { role: 'assistant', content: `a${i}`, toolCalls: [] } }],
          }),
        ),
      );
      expect(turns.map((t) => t.turn).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(turns.filter((t) => t.created)).toHaveLength(1);
      const loaded = await store.load(id, 'alice');
      expect(loaded!.messages.map((m) => m.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      // Each turn's two messages are adjacent.
      for (const t of turns) expect(loaded!.messages.filter((m) => m.turn === t.turn).map((m) => m.seq)).toEqual([t.firstSeq, t.lastSeq]);
    });

    it('keeps the first checkpoint of a turn and the furthest-reaching summary', async () => {
      const id = randomUUID();
      await store.appendTurn({ id, agentId: 'alice', messages: turnOne.map((message) => ({ message })) });
      expect(await store.saveCheckpoint(id, checkpoint(1, 'first'))).toBe(true);
      expect(await store.saveCheckpoint(id, checkpoint(1, 'second'))).toBe(false);
      expect(await store.saveSummary(id, summary(10))).toBe(true);
      expect(await store.saveSummary(id, summary(8))).toBe(false);
      expect(await store.saveSummary(id, summary(12))).toBe(true);
      const loaded = await store.load(id, 'alice');
      expect(loaded!.checkpoints).toEqual([{ ...checkpoint(1, 'first'), createdAt: expect.any(Date) }]);
      expect(loaded!.summary).toMatchObject(summary(12));

      expect(await store.delete(id, 'alice')).toBe(true);
      // A background writer finishing after the delete stores nothing and does not fail.
      expect(await store.saveCheckpoint(id, checkpoint(2, 'late'))).toBe(false);
      expect(await store.saveSummary(id, summary(20))).toBe(false);
      const leftovers = await database!.db.execute(
        sql`SELECT (SELECT count(*) FROM messages WHERE conversation_id = ${id}) + (SELECT count(*) FROM checkpoints WHERE conversation_id = ${id}) AS n`,
      );
      expect(Number((leftovers as unknown as { rows: { n: unknown }[] }).rows[0]!.n)).toBe(0);
    });

    it('lists an agent’s conversations newest first, by pages', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const id = randomUUID();
        ids.push(id);
        await store.appendTurn({ id, agentId: 'lister', messages: [{ message: { role: 'user', content: `conversation ${i}` } }] });
        // Two conversations written within one millisecond (PGlite's clock) would tie and fall back
        // to their random ids: each waits for the next, so "newest first" is the order they were made.
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await store.appendTurn({ id: randomUUID(), agentId: 'someone-else', messages: [{ message: { role: 'user', content: 'x' } }] });
      const first = await store.list({ agentId: 'lister', limit: 2 });
      expect(first.items.map((c) => c.title)).toEqual(['conversation 4', 'conversation 3']);
      const second = await store.list({ agentId: 'lister', limit: 2, cursor: first.nextCursor! });
      const third = await store.list({ agentId: 'lister', limit: 2, cursor: second.nextCursor! });
      expect([...first.items, ...second.items, ...third.items].map((c) => c.id)).toEqual([...ids].reverse());
      expect(third.nextCursor).toBeNull();
      await expect(store.list({ agentId: 'lister', cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
    });

    it('exports and imports a conversation whole, under a new id', async () => {
      const id = randomUUID();
      await store.appendTurn({ id, agentId: 'alice', messages: turnOne.map((message) => ({ message })) });
      await store.saveCheckpoint(id, checkpoint(1, 'first'));
      await store.saveSummary(id, summary(1));
      const exported = await store.export(id, 'alice');
      expect(exported).toMatchObject({ format: 'memrag.conversation', version: 1, conversation: { id, agentId: 'alice' } });

      const imported = await store.import(JSON.parse(JSON.stringify(exported)), 'carol');
      expect(imported.id).not.toBe(id);
      expect(imported).toMatchObject({ agentId: 'carol', turnCount: 1, messageCount: 5, title: exported!.conversation.title });
      const again = await store.export(imported.id, 'carol');
      const strip = (e: typeof exported) => ({ ...e!, conversation: { ...e!.conversation, id: '', agentId: '' } });
      expect(strip(again)).toEqual(strip(exported));
    });

    it('imports all or nothing', async () => {
      const id = randomUUID();
      await store.appendTurn({ id, agentId: 'alice', messages: turnOne.map((message) => ({ message })) });
      const exported = (await store.export(id, 'alice'))!;
      // Two checkpoints for one turn break the primary key after the conversation and messages were written.
      const broken = { ...exported, checkpoints: [checkpoint(1, 'a'), checkpoint(1, 'b')] };
      const before = await store.list({ agentId: 'dave' });
      await expect(store.import(broken, 'dave')).rejects.toThrow();
      expect(await store.list({ agentId: 'dave' })).toEqual(before);
    });
  });
}
