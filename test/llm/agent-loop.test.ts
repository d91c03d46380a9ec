import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EMPTY_REPLY_NUDGE, runAgentTurn, type AgentEvent, type AgentTurnOptions } from '../../src/llm/agent-loop.js';
import { AbortedError, EmptyReplyError } from '../../src/llm/llm-errors.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { defineTool } from '../../src/llm/tool.js';
import { MISSING_TOOL_RESULT } from '../../src/llm/tool-history.js';
import { reply, startScriptedLlmServer, type Script, type ScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const weather = defineTool({
  name: 'weather',
  description: 'Current weather for a city',
  parameters: z.object({ city: z.string(), delayMs: z.number().optional() }),
  execute: async ({ city, delayMs }) => {
    if (delayMs) await sleep(delayMs);
    return { city, tempC: city.length };
  },
});
const slow = defineTool({
  name: 'slow',
  description: 'Never finishes in time',
  parameters: z.object({}),
  execute: (_args, { signal }) =>
    new Promise((resolve) => {
      const t = setTimeout(resolve, 10_000);
      signal.addEventListener('abort', () => clearTimeout(t));
    }),
});
const broken = defineTool({
  name: 'broken',
  description: 'Always throws',
  parameters: z.object({}),
  execute: () => {
    throw new Error('database unreachable');
  },
});

async function turn(script: Script, options: Partial<AgentTurnOptions> = {}) {
  server = await startScriptedLlmServer(script);
  const provider = createLlmProvider({
    baseURL: server.url,
    apiKey: 'k',
    model: 'test-model',
    timeoutMs: 5_000,
    retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 10 },
  });
  const result = await runAgentTurn({
    provider,
    systemPrompt: 'You are helpful.',
    messages: [{ role: 'user', content: 'hello' }],
    tools: [weather, slow, broken],
    ...options,
  });
  return { server, result };
}

const toolMessages = (s: ScriptedLlmServer, i: number) => s.requests[i]!.body.messages.filter((m) => m.role === 'tool');

describe('runAgentTurn', () => {
  it('answers plainly, sending the system prompt and tool schemas', async () => {
    const { server, result } = await turn([reply.text('Hi!', { usage: { prompt_tokens: 100, completion_tokens: 20 } })], {
      prices: { 'test-model': { inputPerMTok: 2, outputPerMTok: 10 } },
    });
    expect(result).toMatchObject({ stopReason: 'completed', text: 'Hi!', iterations: 1 });
    expect(result.usage).toEqual({ promptTokens: 100, completionTokens: 20, totalTokens: 120 });
    expect(result.costUsd).toBeCloseTo((100 * 2 + 20 * 10) / 1e6, 12);
    const body = server.requests[0]!.body;
    expect(body.messages[0]).toEqual({ role: 'system', content: 'You are helpful.' });
    expect(body.tools?.find((t) => t.function.name === 'weather')?.function.parameters).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    });
  });

  it('streams deltas as events when onEvent is given', async () => {
    const events: AgentEvent[] = [];
    const { result } = await turn([reply.text('Streaming works fine', { chunkSize: 4 })], { onEvent: (e) => events.push(e) });
    const text = events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join('');
    expect(text).toBe('Streaming works fine');
    expect(result.text).toBe('Streaming works fine');
  });

  it('does a tool round trip and sums usage over iterations', async () => {
    const events: AgentEvent[] = [];
    const { server, result } = await turn([reply.toolCalls([{ id: 'c1', name: 'weather', arguments: '{"city":"Oslo"}' }]), reply.text('It is 4C in Oslo')], {
      onEvent: (e) => events.push(e),
    });
    expect(result.stopReason).toBe('completed');
    expect(result.text).toBe('It is 4C in Oslo');
    expect(result.usage.totalTokens).toBe(30);
    expect(toolMessages(server, 1)).toEqual([{ role: 'tool', tool_call_id: 'c1', content: '{"city":"Oslo","tempC":4}' }]);
    expect(result.newMessages.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    // Each model call is framed by turn_start/turn_end, the tool calls between them.
    expect(events.filter((e) => e.type !== 'delta').map((e) => e.type)).toEqual(['turn_start', 'turn_end', 'tool_start', 'tool_end', 'turn_start', 'turn_end']);
  });

  it('runs two tool calls in parallel and returns results in call order', async () => {
    const finished: string[] = [];
    const started = Date.now();
    const { server } = await turn(
      [
        reply.toolCalls([
          { id: 'first', name: 'weather', arguments: '{"city":"Lima","delayMs":300}' },
          { id: 'second', name: 'weather', arguments: '{"city":"Rome","delayMs":10}' },
        ]),
        reply.text('done'),
      ],
      { hooks: { afterTool: (call) => void finished.push(call.id) }, toolConcurrency: 2 },
    );
    expect(finished).toEqual(['second', 'first']);
    expect(toolMessages(server, 1).map((m) => m.tool_call_id)).toEqual(['first', 'second']);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('nudges after an empty reply, then accepts the answer', async () => {
    const { server, result } = await turn([reply.empty(), reply.text('Sorry, here it is')]);
    expect(result.text).toBe('Sorry, here it is');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.body.messages.at(-1)).toEqual({ role: 'user', content: EMPTY_REPLY_NUDGE });
    expect(result.newMessages).toEqual([{ role: 'assistant', content: 'Sorry, here it is', toolCalls: [] }]);
  });

  it('fails clearly when empty replies persist', async () => {
    await expect(turn([reply.empty(), reply.empty(), reply.empty()], { maxEmptyRetries: 2 })).rejects.toBeInstanceOf(EmptyReplyError);
    expect(server!.requests).toHaveLength(3);
  });

  it('repairs malformed tool arguments and reports unrepairable ones to the model', async () => {
    const { server } = await turn([
      reply.toolCalls([
        { id: 'ok1', name: 'weather', arguments: "{'city': 'Bergen',}" },
        { id: 'ok2', name: 'weather', arguments: '{"city": "Paris"' },
        { id: 'bad', name: 'weather', arguments: 'city=Paris' },
      ]),
      reply.text('done'),
    ]);
    const results = toolMessages(server, 1);
    expect(results[0]).toMatchObject({ tool_call_id: 'ok1', content: '{"city":"Bergen","tempC":6}' });
    expect(results[1]).toMatchObject({ tool_call_id: 'ok2', content: '{"city":"Paris","tempC":5}' });
    expect(results[2]!.content).toMatch(/^Error: Tool arguments are not valid JSON/);
  });

  it('reports schema violations, unknown tools, failures and timeouts as tool errors', async () => {
    const { server, result } = await turn(
      [
        reply.toolCalls([
          { id: 'a', name: 'weather', arguments: '{"city": 42}' },
          { id: 'b', name: 'teleport', arguments: '{}' },
          { id: 'c', name: 'broken', arguments: '{}' },
          { id: 'd', name: 'slow', arguments: '{}' },
        ]),
        reply.text('recovered'),
      ],
      { toolTimeoutMs: 100 },
    );
    expect(result.text).toBe('recovered');
    const [a, b, c, d] = toolMessages(server, 1).map((m) => m.content as string);
    expect(a).toMatch(/Invalid arguments for tool 'weather'/);
    expect(b).toMatch(/unknown tool 'teleport'. Available tools: weather, slow, broken/);
    expect(c).toMatch(/tool 'broken' failed: database unreachable/);
    expect(d).toMatch(/tool 'slow' timed out after 100 ms/);
  });

  it('drops duplicate tool call ids', async () => {
    const { server } = await turn([
      reply.toolCalls([
        { id: 'dup', name: 'weather', arguments: '{"city":"A"}' },
        { id: 'dup', name: 'weather', arguments: '{"city":"B"}' },
      ]),
      reply.text('done'),
    ]);
    const assistant = server.requests[1]!.body.messages.find((m) => m.role === 'assistant') as unknown as { tool_calls: unknown[] };
    expect(assistant.tool_calls).toHaveLength(1);
    expect(toolMessages(server, 1)).toHaveLength(1);
  });

  it('repairs a tool call without a result in the incoming history', async () => {
    const { server } = await turn([reply.text('ok')], {
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'lost', name: 'weather', arguments: '{}' }] },
        { role: 'user', content: 'again' },
      ],
    });
    const roles = server.requests[0]!.body.messages.map((m) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(toolMessages(server, 0)[0]).toMatchObject({ tool_call_id: 'lost', content: MISSING_TOOL_RESULT });
  });

  it('stops at the iteration limit', async () => {
    const call = () => reply.toolCalls([{ id: `c${Math.random()}`, name: 'weather', arguments: '{"city":"X"}' }]);
    const { server, result } = await turn(() => call(), { maxIterations: 3 });
    expect(result.stopReason).toBe('max_iterations');
    expect(result.iterations).toBe(3);
    expect(server.requests).toHaveLength(3);
    expect(result.newMessages.at(-1)?.role).toBe('tool');
  });

  it('stops early on a token budget, leaving the history valid', async () => {
    const { server, result } = await turn(
      () => reply.toolCalls([{ id: 'c', name: 'weather', arguments: '{"city":"X"}' }], { usage: { prompt_tokens: 600, completion_tokens: 100 } }),
      { budget: { maxTokens: 1000 }, maxIterations: 10 },
    );
    expect(result.stopReason).toBe('budget');
    expect(server.requests).toHaveLength(2);
    expect(result.usage.totalTokens).toBe(1400);
    expect(result.newMessages.at(-1)).toMatchObject({ role: 'tool', isError: true });
  });

  it('stops early on a cost budget', async () => {
    const { result } = await turn(
      () => reply.toolCalls([{ id: 'c', name: 'weather', arguments: '{"city":"X"}' }], { usage: { prompt_tokens: 1_000_000, completion_tokens: 0 } }),
      { budget: { maxCostUsd: 2.5 }, prices: { 'test-model': { inputPerMTok: 1, outputPerMTok: 4 } } },
    );
    expect(result.stopReason).toBe('budget');
    expect(result.costUsd).toBe(3);
  });

  it('runs hooks in order and sends the transformed messages', async () => {
    const log: string[] = [];
    const { server, result } = await turn([reply.toolCalls([{ id: 'h', name: 'weather', arguments: '{"city":"Oslo"}' }]), reply.text('fin')], {
      hooks: [
        {
          beforeLlm: (messages) => {
            log.push('beforeLlm');
            return [...messages, { role: 'user', content: 'Relevant memory: likes Oslo' }];
          },
          afterLlm: (r) => void log.push(`afterLlm:${r.finishReason}`),
          beforeTool: (c) => void log.push(`beforeTool:${c.id}`),
          afterTool: (c, r) => void log.push(`afterTool:${c.id}:${r.isError}`),
        },
        { beforeLlm: () => void log.push('beforeLlm2') },
      ],
    });
    expect(log).toEqual(['beforeLlm', 'beforeLlm2', 'afterLlm:tool_calls', 'beforeTool:h', 'afterTool:h:false', 'beforeLlm', 'beforeLlm2', 'afterLlm:stop']);
    expect(server.requests[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: 'Relevant memory: likes Oslo' });
    // The injection shaped the request only; it is not part of the turn's history.
    expect(result.newMessages.some((m) => m.role === 'user')).toBe(false);
  });

  it('aborts running tools and the turn via the signal', async () => {
    const controller = new AbortController();
    let toolSawAbort = false;
    const waiter = defineTool({
      name: 'waiter',
      description: 'waits for abort',
      parameters: z.object({}),
      execute: (_a, { signal }) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            toolSawAbort = true;
            resolve('stopped');
          });
          setTimeout(() => controller.abort(), 50);
        }),
    });
    await expect(
      turn([reply.toolCalls([{ id: 'w', name: 'waiter', arguments: '{}' }]), reply.text('never')], {
        tools: [waiter],
        signal: controller.signal,
      }),
    ).rejects.toBeInstanceOf(AbortedError);
    expect(toolSawAbort).toBe(true);
    expect(server!.requests).toHaveLength(1);
  });

  it('aborts a streamed LLM reply mid-stream', async () => {
    const controller = new AbortController();
    const deltas: string[] = [];
    await expect(
      turn([reply.text('x'.repeat(300), { chunkSize: 3, chunkDelayMs: 15 })], {
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'delta' && deltas.push(e.text) === 2) controller.abort();
        },
      }),
    ).rejects.toBeInstanceOf(AbortedError);
    await expect.poll(() => server!.requests[0]?.closedEarly).toBe(true);
  });
});
