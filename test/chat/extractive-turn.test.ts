import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../src/chat/chat-reply.js';
import type { ConversationTurn } from '../../src/chat/conversation-turn.js';
import { runExtractiveTurn } from '../../src/chat/extractive-turn.js';
import type { NewMessage } from '../../src/conversations/conversation-types.js';
import type { Source } from '../../src/retrieval/source.js';
import { createInMemoryRunStore } from '../runs/support/in-memory-run-store.js';

const TEA: Source = { id: 1, kind: 'memory', key: 'tea', agentId: 'alice', content: 'Alice prefers green tea in the afternoon.', tags: [], score: 0.9 };

function turnOf(stored: ConversationTurn | undefined, agentVersion: number | null) {
  return {
    message: 'What tea does Alice like?',
    runId: 'run-1',
    conversationId: 'conv-1',
    agentId: 'alice',
    userId: null,
    agentVersion,
    recalled: [TEA],
    questionVector: undefined,
    stored,
    threadKeyOf: () => 'thread-1',
    signal: undefined,
  };
}

describe('extractive turn', () => {
  it('stores the question and the cited answer, records a completed run with its thread key, and emits done last', async () => {
    const runs = createInMemoryRunStore();
    const finished: NewMessage[][] = [];
    const stored = { nextTurn: 1, finish: async (messages: NewMessage[]) => finished.push(messages) } as unknown as ConversationTurn;
    const events: ChatEvent[] = [];
    const reply = await runExtractiveTurn(turnOf(stored, 3), (e) => events.push(e), { runs, embedder: undefined });

    expect(reply).toMatchObject({ runId: 'run-1', mode: 'extractive', citations: [{ kind: 'memory', key: 'tea' }] });
    expect(events.map((e) => e.type)).toEqual(['retrieval', 'delta', 'done']);
    expect(finished).toHaveLength(1);
    expect(finished[0]![0]).toEqual({ message: { role: 'user', content: 'What tea does Alice like?' }, metadata: { runId: 'run-1', agentVersion: 3 } });
    expect(finished[0]![1]).toMatchObject({
      message: { role: 'assistant', content: reply.answer },
      metadata: { citations: reply.citations, mode: 'extractive' },
    });
    expect(await runs.get('run-1')).toMatchObject({ status: 'completed', stopReason: 'completed', agentVersion: 3 });
    expect(await runs.conversationOfThread('thread-1', 'alice', null)).toBe('conv-1');
  });

  it('leaves agentVersion out of the stored question when the agent has no record', async () => {
    const finished: NewMessage[][] = [];
    const stored = { nextTurn: 1, finish: async (messages: NewMessage[]) => finished.push(messages) } as unknown as ConversationTurn;
    await runExtractiveTurn(turnOf(stored, null), () => {}, { runs: createInMemoryRunStore(), embedder: undefined });
    expect(finished[0]![0]!.metadata).toEqual({ runId: 'run-1' });
  });
});
