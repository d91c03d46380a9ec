import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AgentTurnOptions, runAgentTurn } from '../../src/llm/agent-loop.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { defineTool } from '../../src/llm/tool.js';
import { limitToolResult } from '../../src/llm/tool-result-limit.js';
import { type Script, type ScriptedLlmServer, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

/** Per-tool limits of a turn: result size, a circuit breaker on failing tools, tools kept behind tool_search. */
let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  flakyPlan = [];
});

let flakyCalls = 0;
/** Whether each call of `flaky` succeeds, in order; past the end, calls fail. */
let flakyPlan: boolean[] = [];
const flaky = defineTool({
  name: 'flaky',
  description: 'Fetch a page that often fails',
  parameters: z.object({}),
  execute: () => {
    if (!flakyPlan[flakyCalls++]) throw new Error('upstream 503');
    return 'page';
  },
});
const big = defineTool({ name: 'big', description: 'Return a long text', parameters: z.object({}), execute: () => 'x'.repeat(5000) });
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up in the dictionary',
  parameters: z.object({ word: z.string() }),
  execute: ({ word }) => `meaning of ${word}`,
});

async function turn(script: Script, options: Partial<AgentTurnOptions> = {}) {
  flakyCalls = 0;
  server = await startScriptedLlmServer(script);
  const provider = createLlmProvider({ baseURL: server.url, apiKey: 'k', model: 'test-model', retry: { maxAttempts: 1 } });
  const result = await runAgentTurn({ provider, messages: [{ role: 'user', content: 'hello' }], tools: [flaky, big, lookup], ...options });
  return { server, result };
}

const toolResults = (s: ScriptedLlmServer, i: number) => s.requests[i]!.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
const toolNames = (s: ScriptedLlmServer, i: number) => (s.requests[i]!.body.tools ?? []).map((t) => t.function.name);
const callFlaky = (id: string) => reply.toolCalls([{ id, name: 'flaky', arguments: '{}' }]);

describe('a tool result over maxToolResultChars', () => {
  it('is cut, and the model told how much was cut', async () => {
    const { server } = await turn([reply.toolCalls([{ id: 'b', name: 'big', arguments: '{}' }]), reply.text('ok')], { maxToolResultChars: 1000 });
    const [content] = toolResults(server, 1);
    expect(content!.startsWith('x'.repeat(1000))).toBe(true);
    expect(content!.slice(1000)).not.toContain('x');
    expect(content).toContain('4000 of 5000 characters cut');
  });

  it('is sent whole without a limit', async () => {
    const { server } = await turn([reply.toolCalls([{ id: 'b', name: 'big', arguments: '{}' }]), reply.text('ok')]);
    expect(toolResults(server, 1)[0]).toBe('x'.repeat(5000));
  });

  it('is not cut between the halves of a surrogate pair', () => {
    const cut = limitToolResult(`${'a'.repeat(99)}😀rest`, 100);
    expect(cut.startsWith(`${'a'.repeat(99)}\n`)).toBe(true);
    expect(limitToolResult('short', 100)).toBe('short');
  });
});

describe('the circuit breaker (maxConsecutiveToolErrors)', () => {
  it('withdraws a tool after N errors in a row: the model is told, no longer offered it, and a later call does not run', async () => {
    const { server, result } = await turn([callFlaky('1'), callFlaky('2'), callFlaky('3'), reply.text('gave up')], { maxConsecutiveToolErrors: 2 });
    expect(result.text).toBe('gave up');
    expect(flakyCalls).toBe(2);
    const results = toolResults(server, 3);
    expect(results[0]).toMatch(/upstream 503/);
    expect(results[0]).not.toMatch(/withdrawn/);
    expect(results[1]).toMatch(/upstream 503[\s\S]*'flaky' failed 2 times in a row and is withdrawn/);
    expect(results[2]).toMatch(/'flaky' is withdrawn/);
    expect(toolNames(server, 1)).toContain('flaky');
    expect(toolNames(server, 2)).not.toContain('flaky');
    expect(toolNames(server, 2)).toEqual(['big', 'lookup']);
    expect(result.state.withdrawn).toEqual(['flaky']);
  });

  it('counts only errors in a row: a success starts the count again', async () => {
    flakyPlan = [false, true, false, false];
    const { server } = await turn([callFlaky('1'), callFlaky('2'), callFlaky('3'), callFlaky('4'), reply.text('done')], { maxConsecutiveToolErrors: 2 });
    expect(flakyCalls).toBe(4);
    expect(toolNames(server, 3)).toContain('flaky');
    expect(toolNames(server, 4)).not.toContain('flaky');
  });

  it('is off without a threshold', async () => {
    const { server } = await turn([callFlaky('1'), callFlaky('2'), callFlaky('3'), reply.text('done')]);
    expect(flakyCalls).toBe(3);
    expect(toolNames(server, 3)).toContain('flaky');
  });
});

describe('deferred tools', () => {
  it('keeps the named tools behind tool_search, the others shown, until a search finds them', async () => {
    const { server, result } = await turn(
      [
        reply.toolCalls([{ id: 's', name: 'tool_search', arguments: '{"query":"dictionary word"}' }]),
        reply.toolCalls([{ id: 'l', name: 'lookup', arguments: '{"word":"tea"}' }]),
        reply.text('done'),
      ],
      { deferredTools: ['lookup'] },
    );
    expect(result.text).toBe('done');
    expect(toolNames(server, 0)).toEqual(['tool_search', 'flaky', 'big']);
    expect(JSON.parse(toolResults(server, 1)[0]!).tools.map((t: { name: string }) => t.name)).toEqual(['lookup']);
    expect(toolNames(server, 1)).toEqual(['tool_search', 'flaky', 'big', 'lookup']);
    expect(toolResults(server, 2)[1]).toBe('meaning of tea');
  });

  it('keeps a client tool marked deferred behind tool_search, however few the tools', async () => {
    const clientTools = [{ name: 'get_location', description: "The user's location from their device", parameters: { type: 'object' }, deferred: true }];
    const { server, result } = await turn(
      [
        reply.toolCalls([{ id: 's', name: 'tool_search', arguments: '{"query":"location device"}' }]),
        reply.toolCalls([{ id: 'c', name: 'get_location', arguments: '{}' }]),
      ],
      { clientTools },
    );
    expect(toolNames(server, 0)).toEqual(['tool_search', 'flaky', 'big', 'lookup']);
    expect(toolNames(server, 1)).toEqual(['tool_search', 'flaky', 'big', 'lookup', 'get_location']);
    expect(result.pending?.clientCalls.map((c) => c.name)).toEqual(['get_location']);
  });
});
