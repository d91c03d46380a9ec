import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type Script, type ScriptedLlmServer, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { parseSse } from '../support/parse-sse.js';
import { appWithScriptedLlm, call, clearConversations, clearMemories, createApp, createTestContext } from './http-test-context.js';
import { LOCATION_TOOL, locationCall, post, openRunsTestContext } from './support/runs-test-setup.js';

let ctx: AppContext;
let server: ScriptedLlmServer | undefined;

beforeAll(async () => {
  ctx = await openRunsTestContext();
});
afterAll(async () => {
  await ctx?.close();
});
beforeEach(async () => {
  await clearMemories(ctx);
  await clearConversations(ctx);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function appWithLlm(script: Script, base: AppContext = ctx): Promise<{ app: Hono; llm: ScriptedLlmServer }> {
  const made = await appWithScriptedLlm(base, script);
  server = made.llm;
  return made;
}

describe('client-side tools', () => {
  it('pauses the turn for a client tool and resumes it with the output (JSON)', async () => {
    const { app, llm } = await appWithLlm([reply.toolCalls([locationCall]), reply.text('You are in Oslo.')]);

    const paused = await call(app, 'POST', '/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL] });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      status: 'requires_action',
      requiredAction: {
        type: 'submit_tool_outputs',
        toolCalls: [{ id: 'call_loc', type: 'function', function: { name: 'get_location', arguments: '{"precise":true}' } }],
      },
    });
    const { runId, conversationId } = paused.body;
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    // The client's tool was advertised beside the built-in ones, with its schema.
    expect(llm.requests[0]!.body.tools?.find((t) => t.function.name === 'get_location')?.function.parameters).toEqual(LOCATION_TOOL.function.parameters);

    const run = await call(app, 'GET', `/v1/runs/${runId}`);
    expect(run.body).toMatchObject({ id: runId, status: 'requires_action', conversationId, agentId: 'default', agentVersion: null, stopReason: null });
    expect(run.body.requiredAction.toolCalls[0].id).toBe('call_loc');
    // Nothing is stored before the turn completes.
    expect((await call(app, 'GET', `/v1/conversations/${conversationId}`)).status).toBe(404);

    const done = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: '{"city":"Oslo"}' }] });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', runId, conversationId, answer: 'You are in Oslo.', stopReason: 'completed', mode: 'llm' });
    expect(done.body.usage.totalTokens).toBe(30);
    expect(done.body.toolCalls).toEqual([{ id: 'call_loc', name: 'get_location', arguments: { precise: true }, result: '{"city":"Oslo"}', isError: false }]);
    const toolMessage = llm.requests[1]!.body.messages.find((m) => m.role === 'tool');
    expect(toolMessage).toMatchObject({ tool_call_id: 'call_loc', content: '{"city":"Oslo"}' });

    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({ status: 'completed', stopReason: 'completed', usage: { totalTokens: 30 } });
    const stored = await call(app, 'GET', `/v1/conversations/${conversationId}`);
    expect(stored.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(stored.body.messages[0].metadata).toEqual({ runId, fixedTokens: expect.any(Number) });

    const again = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'x' }] });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('run_not_waiting');
  });

  it('streams the pause as the last event, and the resumed turn with ids that go on', async () => {
    const { app } = await appWithLlm([reply.toolCalls([locationCall]), reply.text('You are in Oslo.', { chunkSize: 4 })]);
    const first = parseSse(await (await post(app, '/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL], stream: true })).text());
    // The model call that asked for the tool is framed by turn_start and turn_end, before the pause.
    expect(first.map((e) => e.event)).toEqual(['retrieval', 'turn_start', 'turn_end', 'requires_action']);
    expect(first.map((e) => e.id)).toEqual(['1', '2', '3', '4']);
    expect(first[1]!.data).toEqual({ iteration: 1 });
    expect(first[2]!.data).toMatchObject({ iteration: 1, finishReason: 'tool_calls' });
    const paused = first.at(-1)!.data;
    expect(paused).toMatchObject({ status: 'requires_action', requiredAction: { toolCalls: [{ id: 'call_loc' }] } });

    const res = await post(app, `/v1/runs/${paused.runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }], stream: true });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const second = parseSse(await res.text());
    expect(second[0]).toMatchObject({ event: 'tool_start', id: '5', data: { id: 'call_loc', name: 'get_location' } });
    expect(second.at(-1)).toMatchObject({ event: 'done', data: { status: 'completed', answer: 'You are in Oslo.', runId: paused.runId } });
    // The client's call ends, then the resumed turn's model call (the turn's second: iterations go on) frames the answer's deltas.
    const order = second.map((e) => e.event).filter((event, i, all) => event !== 'delta' || all[i - 1] !== 'delta');
    expect(order).toEqual(['tool_start', 'tool_end', 'turn_start', 'delta', 'turn_end', 'done']);
    expect(second.find((e) => e.event === 'turn_start')!.data).toEqual({ iteration: 2 });
    expect(second.find((e) => e.event === 'turn_end')!.data).toMatchObject({
      iteration: 2,
      finishReason: 'stop',
      usage: { promptTokens: 10, completionTokens: 5 },
    });
    const ids = second.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => 5 + i));
    expect(
      second
        .filter((e) => e.event === 'delta')
        .map((e) => e.data.text)
        .join(''),
    ).toBe('You are in Oslo.');
  });

  it('runs the built-in call of a reply and pauses for the client one beside it', async () => {
    await ctx.memories.forTenant('default').save({ key: 'home', content: 'The user lives in Bergen' });
    const { app, llm } = await appWithLlm([
      reply.toolCalls([{ id: 'call_mem', name: 'search_memories', arguments: '{"query":"where does the user live"}' }, locationCall]),
      reply.text('You live in Bergen [1] and are in Oslo now.'),
    ]);
    const paused = await call(app, 'POST', '/v1/chat', { message: 'Where am I, and where do I live?', tools: [LOCATION_TOOL] });
    expect(paused.body.status).toBe('requires_action');
    expect(paused.body.requiredAction.toolCalls.map((c: { id: string }) => c.id)).toEqual(['call_loc']);
    expect(paused.body.toolCalls).toMatchObject([{ id: 'call_mem', name: 'search_memories', isError: false }]);
    expect(llm.requests).toHaveLength(1);

    const done = await call(app, 'POST', `/v1/runs/${paused.body.runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }] });
    expect(done.body.status).toBe('completed');
    expect(done.body.toolCalls.map((c: { id: string }) => c.id)).toEqual(['call_mem', 'call_loc']);
    // [1] still names the memory the built-in tool found before the pause.
    expect(done.body.citations).toMatchObject([{ id: 1, kind: 'memory', key: 'home' }]);
    const tools = llm.requests[1]!.body.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    expect(tools).toEqual(['call_mem', 'call_loc']);
  });

  it('refuses outputs that miss a pending call (400), name an unknown one (409) or repeat one (400)', async () => {
    const { app } = await appWithLlm([
      reply.toolCalls([locationCall, { id: 'call_b', name: 'get_location', arguments: '{"precise":false}' }]),
      reply.text('ok'),
    ]);
    const { runId } = (await call(app, 'POST', '/v1/chat', { message: 'Where?', tools: [LOCATION_TOOL] })).body;
    const missing = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details[0].path).toBe('toolOutputs');
    expect(missing.body.error.details[0].message).toContain('call_b');
    const unknown = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, {
      toolOutputs: [
        { toolCallId: 'call_loc', output: 'Oslo' },
        { toolCallId: 'call_zzz', output: 'x' },
      ],
    });
    expect(unknown.status).toBe(409);
    expect(unknown.body.error.code).toBe('tool_call_not_pending');
    const repeated = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, {
      toolOutputs: [
        { toolCallId: 'call_loc', output: 'Oslo' },
        { toolCallId: 'call_loc', output: 'Oslo' },
      ],
    });
    expect(repeated.status).toBe(400);
    // Still waiting: none of the refused requests moved it.
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body.status).toBe('requires_action');
    const approvals = await call(app, 'POST', `/v1/runs/${runId}/approvals`, { decisions: [{ toolCallId: 'call_loc', approve: true }] });
    expect(approvals.status).toBe(409);
    expect(approvals.body.error.code).toBe('run_not_waiting');
  });

  it('refuses a tool declaration whose parameters are not a JSON Schema object, or that reuses a built-in name', async () => {
    const { app } = await appWithLlm([]);
    const bad = await call(app, 'POST', '/v1/chat', { message: 'x', tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'string' } } }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('tools.0.function.parameters');
    const invalid = await call(app, 'POST', '/v1/chat', {
      message: 'x',
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'nonsense' } } } } }],
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details[0].message).toContain('JSON Schema');
    const clash = await call(app, 'POST', '/v1/chat', { message: 'x', tools: [{ type: 'function', function: { name: 'save_memory' } }] });
    expect(clash.status).toBe(400);
    expect(clash.body.error.details[0].path).toBe('tools.0.function.name');
  });

  it('sends arguments that fail the declared schema back to the model instead of pausing', async () => {
    const { app, llm } = await appWithLlm([reply.toolCalls([{ id: 'c', name: 'get_location', arguments: '{"precise":"very"}' }]), reply.text('Sorry.')]);
    const res = await call(app, 'POST', '/v1/chat', { message: 'Where?', tools: [LOCATION_TOOL] });
    expect(res.body.status).toBe('completed');
    expect(String(llm.requests[1]!.body.messages.find((m) => m.role === 'tool')?.content)).toContain('must be boolean');
  });

  it('expires a run left unanswered past RUN_TTL_SECONDS', async () => {
    const short = await createTestContext({ RUN_TTL_SECONDS: '1' });
    try {
      const { app } = await appWithLlm([reply.toolCalls([locationCall]), reply.text('late')], short);
      const { runId, expiresAt } = (await call(app, 'POST', '/v1/chat', { message: 'Where?', tools: [LOCATION_TOOL] })).body;
      expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(1000);
      await new Promise((r) => setTimeout(r, 1_200));
      const late = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }] });
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe('run_expired');
      expect((await call(app, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({ status: 'expired' });
    } finally {
      await short.close();
    }
  });

  it('resumes a paused run after a server restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'memrag-runs-'));
    const open = () => createAppContext(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' }), { embedder: createHashEmbedder(64) });
    try {
      server = await startScriptedLlmServer([reply.toolCalls([locationCall]), reply.text('You are in Oslo.')]);
      const llm = createLlmProvider({ baseURL: server.url, apiKey: 'k', model: 'test-model', retry: { maxAttempts: 1 } });
      const before = await open();
      const { runId, conversationId } = (await call(createApp({ ...before, llm }), 'POST', '/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL] }))
        .body;
      await before.close();

      const after = await open();
      try {
        const app = createApp({ ...after, llm });
        expect((await call(app, 'GET', `/v1/runs/${runId}`)).body.status).toBe('requires_action');
        const done = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }] });
        expect(done.body).toMatchObject({ status: 'completed', answer: 'You are in Oslo.', conversationId });
        // The model saw the question with its sources, the call and its output, as if nothing had happened.
        const sent = server.requests[1]!.body.messages;
        expect(String(sent.find((m) => m.role === 'user')?.content)).toContain('Question:\nWhere am I?');
        expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
        expect((await call(app, 'GET', `/v1/conversations/${conversationId}`)).body.conversation.turnCount).toBe(1);
      } finally {
        await after.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
