import { afterEach, describe, expect, it } from 'vitest';
import { type AgentEvent, type AgentTurnOptions, runAgentTurn } from '../../src/llm/agent-loop.js';
import { CONTINUE_PROMPT } from '../../src/llm/continuation.js';
import { createLlmProvider, type LlmProviderOptions } from '../../src/llm/llm-provider.js';
import { costUsd } from '../../src/llm/pricing.js';
import { reply, type Script, type ScriptedLlmServer, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

/** The loop's model capabilities against the scripted model: reasoning, continuation, sampling, events, usage. */

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function turn(script: Script, options: Partial<AgentTurnOptions> = {}, provider: Partial<LlmProviderOptions> = {}) {
  server = await startScriptedLlmServer(script);
  const events: AgentEvent[] = [];
  const result = await runAgentTurn({
    provider: createLlmProvider({
      baseURL: server.url,
      apiKey: 'k',
      model: 'test-model',
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      ...provider,
    }),
    systemPrompt: 'Be brief.',
    messages: [{ role: 'user', content: 'Hi' }],
    onEvent: (event) => events.push(event),
    ...options,
  });
  return { result, events, requests: server.requests };
}

const deltas = (events: AgentEvent[]) =>
  events
    .filter((e) => e.type === 'delta')
    .map((e) => (e as { text: string }).text)
    .join('');
const thinking = (events: AgentEvent[]) =>
  events
    .filter((e) => e.type === 'thinking')
    .map((e) => (e as { text: string }).text)
    .join('');

describe('reasoning', () => {
  it.each([
    ['reasoning_content', true],
    ['reasoning', true],
    ['reasoning_content', false],
  ] as const)('keeps a %s field out of the answer and the history (stream: %s)', async (field, stream) => {
    const { result, events } = await turn([reply.text('Tea.', { reasoning: 'They asked about tea.', reasoningField: field, chunkSize: 3 })], { stream });
    expect(result.text).toBe('Tea.');
    expect(result.reasoning).toBe('They asked about tea.');
    expect(result.state.reasoning).toBe('They asked about tea.');
    expect(JSON.stringify(result.newMessages)).not.toContain('asked about');
    expect(thinking(events)).toBe('They asked about tea.');
    expect(deltas(events)).toBe(stream ? 'Tea.' : '');
  });

  it('takes a leading <think> block cut across stream deltas as reasoning', async () => {
    const { result, events } = await turn([reply.text('<think>Plan it.</think>\n\nThe answer.', { chunkSize: 3 })], { stream: true });
    expect(result.text).toBe('The answer.');
    expect(result.reasoning).toBe('Plan it.');
    expect(deltas(events)).toBe('The answer.');
    expect(thinking(events)).toBe('Plan it.');
  });

  it('joins the reasoning of every model call of the turn', async () => {
    const { result } = await turn(
      [reply.toolCalls([{ name: 'nothing', arguments: '{}' }], { reasoning: 'First.' }), reply.text('<think>Second.</think>Done.')],
      { stream: false, clientTools: [] },
    );
    // An unknown tool is answered with an error; the next call answers.
    expect(result.text).toBe('Done.');
    expect(result.reasoning).toBe('First.\n\nSecond.');
  });
});

describe('a reply cut by the output limit', () => {
  it('is continued: the partial text goes back as the assistant and the answer is joined', async () => {
    const { result, requests, events } = await turn(
      [reply.text('The first half, ', { finishReason: 'length' }), reply.text('and the second.', { chunkSize: 4 })],
      { stream: true },
    );
    expect(result.stopReason).toBe('completed');
    expect(result.text).toBe('The first half, and the second.');
    expect(result.newMessages).toEqual([{ role: 'assistant', content: 'The first half, and the second.', toolCalls: [] }]);
    expect(requests[1]!.body.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'The first half, ' },
      { role: 'user', content: CONTINUE_PROMPT },
    ]);
    expect(deltas(events)).toBe('The first half, and the second.');
    expect(result.usage.totalTokens).toBe(30);
  });

  it('ends the turn with max_tokens when still cut after maxContinuations', async () => {
    const cut = (text: string) => reply.text(text, { finishReason: 'length' });
    const { result, requests } = await turn([cut('a'), cut('b'), cut('c')], { stream: false, maxContinuations: 2 });
    expect(requests).toHaveLength(3);
    expect(result.stopReason).toBe('max_tokens');
    expect(result.text).toBe('abc');
  });

  it('is not continued with maxContinuations 0', async () => {
    const { result, requests } = await turn([reply.text('cut', { finishReason: 'length' })], { stream: false, maxContinuations: 0 });
    expect(requests).toHaveLength(1);
    expect(result.stopReason).toBe('max_tokens');
  });

  it('ends with max_tokens, not an empty-reply error, when the limit was spent reasoning', async () => {
    const { result, requests } = await turn([reply.text('', { reasoning: 'thinking a lot', finishReason: 'length' })], { stream: true });
    expect(requests).toHaveLength(1);
    expect(result.stopReason).toBe('max_tokens');
    expect(result.reasoning).toBe('thinking a lot');
  });
});

describe('sampling and reasoning effort', () => {
  it('sends them as OpenAI names them, and nothing when unset', async () => {
    const callOptions = {
      sampling: { maxTokens: 64, topP: 0.5, stop: ['END'], seed: 7, presencePenalty: 0.1, frequencyPenalty: -0.2 },
      reasoningEffort: 'high' as const,
    };
    const { requests } = await turn([reply.text('a'), reply.text('b')], { stream: true, callOptions });
    expect(requests[0]!.body).toMatchObject({
      max_tokens: 64,
      top_p: 0.5,
      stop: ['END'],
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: -0.2,
      reasoning_effort: 'high',
    });
    await server!.close();
    const bare = await turn([reply.text('a')], { stream: false });
    for (const field of ['max_tokens', 'top_p', 'stop', 'seed', 'presence_penalty', 'frequency_penalty', 'reasoning_effort']) {
      expect(bare.requests[0]!.body[field], field).toBeUndefined();
    }
  });

  it('sends the output limit as max_completion_tokens where the provider wants it', async () => {
    const { requests } = await turn(
      [reply.text('a')],
      { stream: false, callOptions: { sampling: { maxTokens: 9 } } },
      { maxTokensParam: 'max_completion_tokens' },
    );
    expect(requests[0]!.body.max_completion_tokens).toBe(9);
    expect(requests[0]!.body.max_tokens).toBeUndefined();
  });
});

describe('events and usage', () => {
  it('frames every model call with turn_start and turn_end, retries reported between', async () => {
    const { result, events } = await turn(
      [reply.error(503), reply.text('Fine.', { usage: { prompt_tokens: 100, completion_tokens: 20 }, cachedTokens: 80, reasoningTokens: 5 })],
      {
        stream: true,
      },
    );
    expect(result.text).toBe('Fine.');
    const framed = events.filter((e) => e.type !== 'delta');
    expect(framed.map((e) => e.type)).toEqual(['turn_start', 'retry', 'turn_end']);
    expect(framed[1]).toMatchObject({ type: 'retry', iteration: 1, attempt: 1, status: 503, reason: expect.stringContaining('503') });
    expect(framed[1]).toHaveProperty('delayMs', expect.any(Number));
    expect(framed[2]).toEqual({
      type: 'turn_end',
      iteration: 1,
      finishReason: 'stop',
      usage: { promptTokens: 100, completionTokens: 20, cachedTokens: 80, reasoningTokens: 5 },
    });
    expect(result.usage).toEqual({ promptTokens: 100, completionTokens: 20, totalTokens: 120, cachedTokens: 80, reasoningTokens: 5 });
  });

  it('prices cached prompt tokens at the cached-input price, or the input price without one', () => {
    const usage = { promptTokens: 1_000_000, completionTokens: 0, cachedTokens: 400_000 };
    expect(costUsd({ m: { inputPerMTok: 10, outputPerMTok: 30, cachedInputPerMTok: 1 } }, 'm', usage)).toBeCloseTo(6 + 0.4);
    expect(costUsd({ m: { inputPerMTok: 10, outputPerMTok: 30 } }, 'm', usage)).toBeCloseTo(10);
  });
});
