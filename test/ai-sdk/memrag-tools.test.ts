import { randomUUID } from 'node:crypto';
import { type ToolSet, generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemragApiError, memragTools } from '../../src/ai-sdk/index.js';
import { type CallOptions, type ListeningMemrag, promptText, startListeningMemrag, textResult, toolCallResult } from './listening-memrag.js';

let memrag: ListeningMemrag;

beforeAll(async () => {
  memrag = await startListeningMemrag();
});
afterAll(async () => {
  await memrag?.close();
});

/**
 * Runs `generateText` with a mock model that calls the tools of `calls` in turn, one per step,
 * then answers with the last tool message it was given. Resolves to the steps and the prompts.
 */
async function runTools(tools: ToolSet, calls: [string, unknown][]) {
  const prompts: CallOptions['prompt'][] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt);
      const next = calls[prompts.length - 1];
      if (next) return toolCallResult(next[0], next[1], `call-${prompts.length}`);
      const last = options.prompt.at(-1);
      return textResult(`I found: ${last ? promptText([last], 'tool') : 'nothing'}`);
    },
  });
  const result = await generateText({ model, tools, stopWhen: stepCountIs(calls.length + 1), prompt: 'Help me, please.' });
  return { result, prompts };
}

/** The output of each step's tool call, in order. */
const outputs = (result: Awaited<ReturnType<typeof runTools>>['result']) => result.steps.flatMap((s) => s.toolResults.map((r) => r.output as any));

describe('memragTools', () => {
  it('saves a memory for the user, and the model finds it again by searching', async () => {
    const tools = memragTools({ baseUrl: memrag.url, userId: 'ursula', agentId: 'tool-agent' });
    const fact = 'Ursula keeps her spare bicycle key under the blue flowerpot.';
    const { result, prompts } = await runTools(tools, [
      ['saveMemory', { content: fact, key: 'bicycle-key', tags: ['home'] }],
      ['searchMemories', { query: 'where is the spare bicycle key?' }],
    ]);
    const [saved, found] = outputs(result);
    expect(saved).toEqual({ key: 'bicycle-key', created: true, status: 'active' });
    expect(found.memories[0]).toMatchObject({ key: 'bicycle-key', content: fact, tags: ['home'], shared: false });
    expect(found.memories[0].score).toBeGreaterThan(0);
    // The model read the search's result in its last prompt, and answered from it.
    expect(promptText(prompts[2]!, 'tool')).toContain('blue flowerpot');
    expect(result.text).toContain('blue flowerpot');

    // Stored as Ursula's memory of that agent: another user's tools do not find it.
    const stored = await memrag.request('GET', '/v1/memories/bicycle-key?agentId=tool-agent&userId=ursula');
    expect(stored.status).toBe(200);
    expect(stored.body.memory).toMatchObject({ content: fact, userId: 'ursula', agentId: 'tool-agent', tags: ['home'] });
    const other = await runTools(memragTools({ baseUrl: memrag.url, userId: 'victor', agentId: 'tool-agent' }), [
      ['searchMemories', { query: 'where is the spare bicycle key?' }],
    ]);
    expect(outputs(other.result)[0].memories).toEqual([]);
  });

  it("searches the documents and returns the passages' text and citation ids", async () => {
    const ingested = await memrag.request('POST', '/v1/documents', {
      title: 'Greenhouse handbook',
      text: '# Watering\n\nThe orchids in the greenhouse are watered every Thursday with rainwater.\n\n# Heating\n\nThe heater runs below 12 degrees.',
      format: 'markdown',
    });
    expect(ingested.status, JSON.stringify(ingested.body)).toBe(201);
    const { result } = await runTools(memragTools({ baseUrl: memrag.url }), [['searchDocuments', { query: 'when are the orchids watered?', topK: 2 }]]);
    const [found] = outputs(result);
    expect(found.passages.length).toBeGreaterThan(0);
    expect(found.passages[0]).toMatchObject({ documentId: ingested.body.document.id, title: 'Greenhouse handbook' });
    expect(found.passages[0].text).toContain('watered every Thursday');
    expect(found.passages[0].chunkId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("recalls the user's past turns from other conversations", async () => {
    const past = randomUUID();
    const recorded = await memrag.request('POST', `/v1/conversations/${past}/turns`, {
      agentId: 'tool-agent',
      userId: 'ursula',
      user: 'I am planning a trip to Tromsø to see the northern lights in February.',
      assistant: 'February is a good month for the northern lights in Tromsø.',
    });
    expect(recorded.status, JSON.stringify(recorded.body)).toBe(201);
    await memrag.ctx.backgroundTasks.whenIdle();

    const tools = memragTools({ baseUrl: memrag.url, userId: 'ursula', agentId: 'tool-agent', conversationId: randomUUID() });
    const { result } = await runTools(tools, [['recallTurns', { query: 'Where was my northern lights trip going?' }]]);
    const [found] = outputs(result);
    expect(found.turns[0]).toMatchObject({
      conversationId: past,
      turn: 1,
      question: 'I am planning a trip to Tromsø to see the northern lights in February.',
      answer: 'February is a good month for the northern lights in Tromsø.',
    });
    // The conversation the model is in is left out.
    const inside = memragTools({ baseUrl: memrag.url, userId: 'ursula', agentId: 'tool-agent', conversationId: past });
    expect(outputs((await runTools(inside, [['recallTurns', { query: 'northern lights trip' }]])).result)[0].turns).toEqual([]);
  });

  it("throws the API's error code and message, which the model sees as the tool's error", async () => {
    const tools = memragTools({ baseUrl: memrag.url, agentId: 'not a valid agent id' });
    const { result, prompts } = await runTools(tools, [['searchMemories', { query: 'anything' }]]);
    const failed = result.steps[0]!.content.find((part) => part.type === 'tool-error');
    expect(failed?.type).toBe('tool-error');
    const error = (failed as { error: unknown }).error;
    expect(error).toBeInstanceOf(MemragApiError);
    expect(error).toMatchObject({ status: 400, code: 'validation_error' });
    expect((error as Error).message).toMatch(/^memrag searchMemories failed \(400 validation_error\): .*agentId/);
    expect(promptText(prompts[1]!, 'tool')).toContain('validation_error');
  });

  it('names a refused key as the API does', async () => {
    const secured = await startListeningMemrag({ API_KEYS: 'tools:tools-test-key-0123456789' });
    try {
      const denied = await runTools(memragTools({ baseUrl: secured.url, apiKey: 'wrong-key-0123456789' }), [['searchDocuments', { query: 'orchids' }]]);
      const failed = denied.result.steps[0]!.content.find((part) => part.type === 'tool-error') as { error: MemragApiError } | undefined;
      expect(failed?.error).toMatchObject({ status: 401 });
      const allowed = await runTools(memragTools({ baseUrl: secured.url, apiKey: 'tools-test-key-0123456789' }), [['searchDocuments', { query: 'orchids' }]]);
      expect(outputs(allowed.result)[0]).toEqual({ passages: [] });
    } finally {
      await secured.close();
    }
  });
});
