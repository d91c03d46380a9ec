import { randomUUID } from 'node:crypto';
import { generateText, simulateReadableStream, streamText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memragMemoryMiddleware } from '../../src/ai-sdk/index.js';
import { type GenerateResult, type ListeningMemrag, type StreamResult, startListeningMemrag } from './listening-memrag.js';

/**
 * The memory middleware stores a turn's answer, never the model's reasoning: a reasoning model's
 * thoughts stay out of the stored turn, and so out of turn recall and fact extraction.
 */
let memrag: ListeningMemrag;
const AGENT = 'middleware-reasoning-agent';

beforeAll(async () => {
  memrag = await startListeningMemrag();
});
afterAll(async () => {
  await memrag?.close();
});

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 9, text: 4, reasoning: 5 },
};

const turnsOf = async (conversationId: string) => {
  const res = await memrag.request('GET', `/v1/conversations/${conversationId}?agentId=${AGENT}`);
  expect(res.status).toBe(200);
  return (res.body.messages as { turn: number; role: string; content: string }[]).map((m) => [m.turn, m.role, m.content]);
};

describe('memragMemoryMiddleware with a reasoning model', () => {
  it('stores the answer of a generateText call without its reasoning parts', async () => {
    const conversationId = randomUUID();
    const result: GenerateResult = {
      content: [
        { type: 'reasoning', text: 'PRIVATE-THOUGHT: the user likes tea.' },
        { type: 'text', text: 'Try a green tea.' },
      ],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    };
    const middleware = memragMemoryMiddleware({ baseUrl: memrag.url, userId: 'uma', agentId: AGENT, conversationId });
    const generated = await generateText({
      model: wrapLanguageModel({ model: new MockLanguageModelV3({ doGenerate: result }), middleware }),
      prompt: 'What should I drink?',
    });
    expect(generated.reasoningText).toBe('PRIVATE-THOUGHT: the user likes tea.');
    expect(await turnsOf(conversationId)).toEqual([
      [1, 'user', 'What should I drink?'],
      [1, 'assistant', 'Try a green tea.'],
    ]);
  });

  it("stores a stream's text without its reasoning deltas", async () => {
    const conversationId = randomUUID();
    const result: StreamResult = {
      stream: simulateReadableStream({
        chunks: [
          { type: 'stream-start', warnings: [] },
          { type: 'reasoning-start', id: 'r1' },
          { type: 'reasoning-delta', id: 'r1', delta: 'PRIVATE-THOUGHT: ' },
          { type: 'reasoning-delta', id: 'r1', delta: 'coffee is late.' },
          { type: 'reasoning-end', id: 'r1' },
          { type: 'text-start', id: 't1' },
          { type: 'text-delta', id: 't1', delta: 'Try ' },
          { type: 'text-delta', id: 't1', delta: 'a rooibos.' },
          { type: 'text-end', id: 't1' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
        ],
      }),
    };
    const middleware = memragMemoryMiddleware({ baseUrl: memrag.url, userId: 'uma', agentId: AGENT, conversationId });
    const streamed = streamText({
      model: wrapLanguageModel({ model: new MockLanguageModelV3({ doStream: result }), middleware }),
      prompt: 'Something for the evening?',
    });
    expect(await streamed.text).toBe('Try a rooibos.');
    expect(await streamed.reasoningText).toBe('PRIVATE-THOUGHT: coffee is late.');
    expect(await turnsOf(conversationId)).toEqual([
      [1, 'user', 'Something for the evening?'],
      [1, 'assistant', 'Try a rooibos.'],
    ]);
  });
});
