import type { Hono } from 'hono';
import { expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import type { KnowledgeRetriever } from '../../src/retrieval/knowledge.js';
import { type Script, type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { call } from './http-test-context.js';
import { scriptedAgentApp } from './support/scripted-agent-app.js';

/** An agent's per-tool limits: time limit, result size, circuit breaker, tools behind tool_search, parallel calls. */

/** Documents whose search for "slow…" takes `slowMs` (or until its signal aborts); counts the searches in flight. */
function slowKnowledge(slowMs: number) {
  const seen = { inFlight: 0, maxInFlight: 0, aborted: 0 };
  const retriever: KnowledgeRetriever = {
    search: (query, { signal }) => {
      if (!query.startsWith('slow')) return Promise.resolve([]);
      seen.inFlight++;
      seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      return new Promise((resolve) => {
        const done = () => {
          seen.inFlight--;
          resolve([]);
        };
        const timer = setTimeout(done, slowMs);
        signal?.addEventListener('abort', () => {
          seen.aborted++;
          clearTimeout(timer);
          done();
        });
      });
    },
  };
  return { seen, knowledge: { forTenant: () => retriever } };
}

const LOCATION_TOOL = {
  type: 'function',
  function: { name: 'get_location', description: "The user's location from their device", parameters: { type: 'object', properties: {} } },
  deferred: true,
} as const;

describeOnDrivers('per-tool limits of an agent', (driver) => {
  const { ctx, appWithLlm: appWithScripted } = scriptedAgentApp(driver);
  const appWithLlm = (script: Script, extra: Partial<AppContext> = {}) => appWithScripted(script, { extra });
  async function agent(app: Hono, id: string, settings: Record<string, unknown>) {
    const res = await call(app, 'POST', '/v1/agents', { id, name: id, ...settings });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  const toolResults = (llm: ScriptedLlmServer, i: number) => llm.requests[i]!.body.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
  const toolNames = (llm: ScriptedLlmServer, i: number) => (llm.requests[i]!.body.tools ?? []).map((t) => t.function.name);
  const searchKnowledge = (id: string, query: string) => ({ id, name: 'search_knowledge', arguments: JSON.stringify({ query }) });

  it("stops a built-in tool at the agent's timeoutMs and tells the model", async () => {
    const { seen, knowledge } = slowKnowledge(5_000);
    const { app, llm } = await appWithLlm([reply.toolCalls([searchKnowledge('k', 'slow docs')]), reply.text('It took too long.')], { knowledge });
    await agent(app, 'hasty', { tools: { timeoutMs: 150 } });
    const started = Date.now();
    const res = await call(app, 'POST', '/v1/chat', { message: 'Find the docs', agentId: 'hasty' });
    expect(res.body).toMatchObject({ status: 'completed', answer: 'It took too long.', toolCalls: [{ name: 'search_knowledge', isError: true }] });
    expect(toolResults(llm, 1)[0]).toMatch(/tool 'search_knowledge' timed out after 150 ms/);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(seen.aborted).toBe(1);
  });

  it('runs at most toolCalls.parallel calls at once', async () => {
    const calls = [searchKnowledge('a', 'slow a'), searchKnowledge('b', 'slow b'), searchKnowledge('c', 'slow c')];
    for (const [parallel, most] of [
      [1, 1],
      [3, 3],
    ] as const) {
      const { seen, knowledge } = slowKnowledge(80);
      const { app } = await appWithLlm([reply.toolCalls(calls), reply.text('done')], { knowledge });
      await agent(app, `p${parallel}`, { toolCalls: { parallel } });
      expect((await call(app, 'POST', '/v1/chat', { message: 'Find them', agentId: `p${parallel}` })).body.status).toBe('completed');
      expect(seen.maxInFlight).toBe(most);
    }
  });

  it('cuts a result past maxResultChars, with a note of how much was cut', async () => {
    await ctx()
      .memories.forTenant('default')
      .save({ key: 'long', content: `Tea notes: ${'green tea is grown in the hills. '.repeat(60)}`, agentId: 'brief' });
    const { app, llm } = await appWithLlm([reply.toolCalls([{ id: 's', name: 'search_memories', arguments: '{"query":"tea notes"}' }]), reply.text('ok')]);
    await agent(app, 'brief', { tools: { maxResultChars: 300 } });
    await call(app, 'POST', '/v1/chat', { message: 'What do my notes say?', agentId: 'brief' });
    const [result] = toolResults(llm, 1);
    const note = /\n\n\[(\d+) of (\d+) characters cut: the result is longer than this agent's limit of 300\]$/.exec(result!);
    expect(note, result).not.toBeNull();
    expect(result!.length - note![0].length).toBe(300);
    expect(Number(note![2]) - Number(note![1])).toBe(300);
  });

  it('withdraws a tool after maxConsecutiveErrors errors in a row, telling the model, and offers it no more', async () => {
    const badSave = (id: string) => reply.toolCalls([{ id, name: 'save_memory', arguments: '{"content": 42}' }]);
    const { app, llm } = await appWithLlm([badSave('1'), badSave('2'), badSave('3'), reply.text('I could not save it.')]);
    await agent(app, 'breaker', { tools: { maxConsecutiveErrors: 2 } });
    const res = await call(app, 'POST', '/v1/chat', { message: 'Remember 42', agentId: 'breaker' });
    expect(res.body).toMatchObject({ status: 'completed', answer: 'I could not save it.' });
    const results = toolResults(llm, 3);
    expect(results[0]).not.toMatch(/withdrawn/);
    expect(results[1]).toMatch(/'save_memory' failed 2 times in a row and is withdrawn/);
    expect(results[2]).toMatch(/'save_memory' is withdrawn/);
    expect(toolNames(llm, 1)).toContain('save_memory');
    expect(toolNames(llm, 2)).not.toContain('save_memory');
    expect(toolNames(llm, 3)).not.toContain('save_memory');
  });

  it('keeps deferred built-in tools behind tool_search until a search finds them', async () => {
    const { app, llm } = await appWithLlm([
      reply.toolCalls([{ id: 's', name: 'tool_search', arguments: '{"query":"save a memory"}' }]),
      reply.toolCalls([{ id: 'm', name: 'save_memory', arguments: '{"key":"tea","content":"Alice drinks green tea"}' }]),
      reply.text('Saved.'),
    ]);
    await agent(app, 'lean', { tools: { deferred: ['save_memory', 'delete_memory'] } });
    const res = await call(app, 'POST', '/v1/chat', { message: 'Remember that I drink green tea', agentId: 'lean' });
    expect(res.body).toMatchObject({ status: 'completed', answer: 'Saved.' });
    expect(toolNames(llm, 0)).toContain('tool_search');
    expect(toolNames(llm, 0)).not.toContain('save_memory');
    expect(toolNames(llm, 0)).not.toContain('delete_memory');
    expect(toolNames(llm, 0)).toContain('search_memories');
    expect(toolNames(llm, 1)).toContain('save_memory');
    expect((await ctx().memories.forTenant('default').get('tea', { agentId: 'lean' }))?.content).toBe('Alice drinks green tea');
  });

  it('keeps a client tool marked deferred behind tool_search, however few the tools', async () => {
    const { app, llm } = await appWithLlm([
      reply.toolCalls([{ id: 's', name: 'tool_search', arguments: '{"query":"location device"}' }]),
      reply.toolCalls([{ id: 'loc', name: 'get_location', arguments: '{}' }]),
    ]);
    const paused = await call(app, 'POST', '/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL] });
    expect(paused.body).toMatchObject({ status: 'requires_action' });
    expect(toolNames(llm, 0)).toContain('tool_search');
    expect(toolNames(llm, 0)).not.toContain('get_location');
    expect(toolNames(llm, 1)).toContain('get_location');
  });

  it.each([
    ['a timeout under 100 ms', { tools: { timeoutMs: 50 } }, 'tools.timeoutMs'],
    ['a timeout over ten minutes', { tools: { timeoutMs: 600_001 } }, 'tools.timeoutMs'],
    ['a result limit under 100 characters', { tools: { maxResultChars: 99 } }, 'tools.maxResultChars'],
    ['a result limit over a million characters', { tools: { maxResultChars: 1_000_001 } }, 'tools.maxResultChars'],
    ['no errors allowed at all', { tools: { maxConsecutiveErrors: 0 } }, 'tools.maxConsecutiveErrors'],
    ['more than 20 errors in a row', { tools: { maxConsecutiveErrors: 21 } }, 'tools.maxConsecutiveErrors'],
    ['a deferred tool that does not exist', { tools: { deferred: ['rm_rf'] } }, 'tools.deferred.0'],
    ['no parallel calls', { toolCalls: { parallel: 0 } }, 'toolCalls.parallel'],
    ['more than 16 parallel calls', { toolCalls: { parallel: 17 } }, 'toolCalls.parallel'],
    ['an unknown textFallback', { toolCalls: { textFallback: 'sometimes' } }, 'toolCalls.textFallback'],
    ['an unknown toolCalls setting', { toolCalls: { parralel: 2 } }, 'toolCalls.parralel'],
  ])('refuses %s with a 400 naming the field, on create and on patch', async (_what, settings, field) => {
    const { app } = await appWithLlm([]);
    for (const res of [await call(app, 'POST', '/v1/agents', { name: 'A', ...settings }), await call(app, 'PATCH', '/v1/agents/none', settings)]) {
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
    }
    expect((await call(app, 'GET', '/v1/agents')).body.items).toEqual([]);
  });

  it('refuses a client tool whose deferred is not a boolean, naming the field', async () => {
    const { app, llm } = await appWithLlm([]);
    const res = await call(app, 'POST', '/v1/chat', { message: 'hi', tools: [{ ...LOCATION_TOOL, deferred: 'yes' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain('tools.0.deferred');
    expect(llm.requests).toHaveLength(0);
  });
});
