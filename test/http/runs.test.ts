import { mkdtempSync, rmSync } from 'node:fs';
import { sql } from 'drizzle-orm';
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

const LOCATION_TOOL = {
  type: 'function',
  function: {
    name: 'get_location',
    description: "The user's location, read from their device",
    parameters: { type: 'object', properties: { precise: { type: 'boolean' } }, required: ['precise'], additionalProperties: false },
  },
};

let ctx: AppContext;
let server: ScriptedLlmServer | undefined;

beforeAll(async () => {
  ctx = await createTestContext({ RUN_RECONNECT_GRACE_MS: '1500' });
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

function post(app: Hono, path: string, body: unknown, signal?: AbortSignal) {
  return app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
}

const locationCall = { id: 'call_loc', name: 'get_location', arguments: '{"precise":true}' };

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
    expect(first.map((e) => e.event)).toEqual(['retrieval', 'requires_action']);
    expect(first.map((e) => e.id)).toEqual(['1', '2']);
    const paused = first.at(-1)!.data;
    expect(paused).toMatchObject({ status: 'requires_action', requiredAction: { toolCalls: [{ id: 'call_loc' }] } });

    const res = await post(app, `/v1/runs/${paused.runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }], stream: true });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const second = parseSse(await res.text());
    expect(second[0]).toMatchObject({ event: 'tool_start', id: '3', data: { id: 'call_loc', name: 'get_location' } });
    expect(second.at(-1)).toMatchObject({ event: 'done', data: { status: 'completed', answer: 'You are in Oslo.', runId: paused.runId } });
    const ids = second.map((e) => Number(e.id));
    expect(ids).toEqual(ids.map((_, i) => 3 + i));
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

describe('runs', () => {
  it('gives every chat reply a run, extractive ones included', async () => {
    const app = createApp({ ...ctx, llm: undefined });
    const res = await call(app, 'POST', '/v1/chat', { message: 'hello' });
    expect(res.body).toMatchObject({ status: 'completed', mode: 'extractive' });
    expect((await call(app, 'GET', `/v1/runs/${res.body.runId}`)).body).toMatchObject({ id: res.body.runId, status: 'completed', stopReason: 'completed' });
    expect((await call(app, 'GET', '/v1/runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await call(app, 'GET', '/v1/runs/not-a-uuid')).status).toBe(400);
  });

  it('cancels a run mid-stream: the model call is aborted and the stream ends with run_cancelled', async () => {
    const { app, llm } = await appWithLlm([reply.text('x'.repeat(400), { chunkSize: 1, chunkDelayMs: 10 })]);
    const res = await post(app, '/v1/chat', { message: 'tell me a long story', stream: true });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes('event: delta')) {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended before any delta');
      seen += decoder.decode(value, { stream: true });
    }
    const runId = parseSse(seen.slice(0, seen.indexOf('\n\n') + 2))[0]!.data.runId as string;
    const cancelled = await call(app, 'POST', `/v1/runs/${runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
    }
    const last = parseSse(seen).at(-1)!;
    expect(last).toMatchObject({ event: 'error', data: { status: 409, error: { code: 'run_cancelled' } } });
    const deadline = Date.now() + 5000;
    while (!llm.requests[0]?.closedEarly && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(llm.requests[0]?.closedEarly).toBe(true);
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({ status: 'cancelled', error: { code: 'run_cancelled' } });
    expect((await call(app, 'POST', `/v1/runs/${runId}/cancel`)).status).toBe(409);
  });

  it('cancels a paused run: it can no longer be resumed', async () => {
    const { app } = await appWithLlm([reply.toolCalls([locationCall])]);
    const { runId } = (await call(app, 'POST', '/v1/chat', { message: 'Where?', tools: [LOCATION_TOOL] })).body;
    expect((await call(app, 'POST', `/v1/runs/${runId}/cancel`)).body.status).toBe('cancelled');
    const late = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }] });
    expect(late.status).toBe(409);
  });

  it('replays the events a client missed when it reconnects with Last-Event-ID', async () => {
    const { app } = await appWithLlm([reply.text('abcdefghijklmnopqrstuvwxyz', { chunkSize: 1, chunkDelayMs: 25 })]);
    const controller = new AbortController();
    const res = await post(app, '/v1/chat', { message: 'the alphabet', stream: true }, controller.signal);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while ((seen.match(/event: delta/g) ?? []).length < 3) {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended early');
      seen += decoder.decode(value, { stream: true });
    }
    const complete = seen.slice(0, seen.lastIndexOf('\n\n') + 2);
    const before = parseSse(complete);
    const runId = before[0]!.data.runId as string;
    const lastId = before.at(-1)!.id!;
    controller.abort();
    await reader.cancel().catch(() => {});

    const again = await app.request(`/v1/runs/${runId}/events`, { headers: { 'last-event-id': lastId } });
    expect(again.status).toBe(200);
    const after = parseSse(await again.text());
    expect(Number(after[0]!.id)).toBe(Number(lastId) + 1);
    expect(after.at(-1)).toMatchObject({ event: 'done', data: { status: 'completed', answer: 'abcdefghijklmnopqrstuvwxyz' } });
    const text = [...before, ...after]
      .filter((e) => e.event === 'delta')
      .map((e) => e.data.text)
      .join('');
    expect(text).toBe('abcdefghijklmnopqrstuvwxyz');
  });

  it('advertises only tool_search past TOOL_SEARCH_THRESHOLD, and the tools it finds afterwards', async () => {
    const many = await createTestContext({ TOOL_SEARCH_THRESHOLD: '3' });
    try {
      const { app, llm } = await appWithLlm(
        [
          reply.toolCalls([{ id: 's', name: 'tool_search', arguments: '{"query":"location of the user device"}' }]),
          reply.toolCalls([locationCall]),
          reply.text('Oslo'),
        ],
        many,
      );
      const paused = await call(app, 'POST', '/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL] });
      expect(paused.body.status).toBe('requires_action');
      expect(llm.requests[0]!.body.tools?.map((t) => t.function.name)).toEqual(['tool_search']);
      expect(llm.requests[1]!.body.tools?.map((t) => t.function.name)).toEqual(['tool_search', 'get_location']);
      const done = await call(app, 'POST', `/v1/runs/${paused.body.runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }] });
      expect(done.body.answer).toBe('Oslo');
      // Still visible after the pause: the promotion is part of the run's state.
      expect(llm.requests[2]!.body.tools?.map((t) => t.function.name)).toEqual(['tool_search', 'get_location']);
    } finally {
      await many.close();
    }
  });

  it('refuses another turn of a conversation whose run waits for the client, until it is answered', async () => {
    const { app } = await appWithLlm([reply.toolCalls([locationCall]), reply.text('Oslo.'), reply.text('Still Oslo.')]);
    const paused = (await call(app, 'POST', '/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL] })).body;
    for (const stream of [false, true]) {
      const busy = await call(app, 'POST', '/v1/chat', { message: 'And now?', conversationId: paused.conversationId, stream });
      expect(busy.status).toBe(409);
      expect(busy.body.error.code).toBe('run_waiting');
      expect(busy.body.error.message).toContain(paused.runId);
    }
    await call(app, 'POST', `/v1/runs/${paused.runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }] });
    const next = await call(app, 'POST', '/v1/chat', { message: 'And now?', conversationId: paused.conversationId });
    expect(next.body).toMatchObject({ status: 'completed', answer: 'Still Oslo.' });
    const stored = await call(app, 'GET', `/v1/conversations/${paused.conversationId}`);
    expect(stored.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content)).toEqual([
      'Where am I?',
      'And now?',
    ]);
  });

  it('a client that only watched the events and left does not abort a run someone waits on as JSON', async () => {
    // A JSON turn does not stream from the model: the wait is before its reply.
    const { app } = await appWithLlm([reply.text('slow and steady', { delayMs: 2_500 })]);
    const pending = call(app, 'POST', '/v1/chat', { message: 'take your time' });
    let runId: string | undefined;
    const deadline = Date.now() + 2_000;
    while (!runId && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      const [row] = ((await ctx.database.db.execute(sql`SELECT id FROM runs WHERE status = 'running' LIMIT 1`)) as unknown as { rows: Array<{ id: string }> })
        .rows;
      runId = row?.id;
    }
    expect(runId).toBeDefined();
    const watcher = new AbortController();
    const watching = await app.request(`/v1/runs/${runId}/events`, { signal: watcher.signal });
    expect(watching.status).toBe(200);
    const reader = watching.body!.getReader();
    await reader.read();
    watcher.abort();
    await reader.cancel().catch(() => {});
    // Past the reconnect grace period (1.5 s here): the run must still be going, and finish.
    const done = await pending;
    expect(done.body).toMatchObject({ status: 'completed', answer: 'slow and steady' });
  });

  it('stops a run cancelled by another process at its next model call, and stores nothing', async () => {
    const { app, llm } = await appWithLlm([
      reply.toolCalls([{ id: 's', name: 'search_memories', arguments: '{"query":"tea"}' }], { delayMs: 300 }),
      reply.text('never asked'),
    ]);
    const pending = call(app, 'POST', '/v1/chat', { message: 'What tea?' });
    while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    // What a cancel on another instance does: only the row changes, this process's live run is not told.
    await ctx.database.db.execute(sql`UPDATE runs SET status = 'cancelled' WHERE status = 'running'`);
    const res = await pending;
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('run_cancelled');
    expect(llm.requests).toHaveLength(1);
    expect((await call(app, 'GET', '/v1/conversations')).body.items).toEqual([]);
  });

  it('refuses tool declarations and outputs that PostgreSQL could not store with the paused run', async () => {
    const { app } = await appWithLlm([]);
    const nul = await call(app, 'POST', '/v1/chat', { message: 'x', tools: [{ type: 'function', function: { name: 'f', description: 'a\u0000b' } }] });
    expect(nul.status).toBe(400);
    expect(nul.body.error.details[0].path).toBe('tools.0.function.description');
    const key = await call(app, 'POST', '/v1/chat', {
      message: 'x',
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string', description: 'x\ud800' } } } } }],
    });
    expect(key.status).toBe(400);
    expect(key.body.error.details[0].path).toBe('tools.0.function.parameters.properties.a.description');
    const output = await call(app, 'POST', '/v1/runs/00000000-0000-4000-8000-000000000000/tool-outputs', {
      toolOutputs: [{ toolCallId: 'c', output: 'x\ud800' }],
    });
    expect(output.status).toBe(400);
  });

  it('records a failed run with the API error body, not the internal message', async () => {
    const { app } = await appWithLlm([{ kind: 'error', status: 400, message: 'secret provider detail' }]);
    const res = await call(app, 'POST', '/v1/chat', { message: 'hello' });
    expect(res.status).toBe(502);
    const [row] = (
      (await ctx.database.db.execute(sql`SELECT id FROM runs WHERE status = 'failed' ORDER BY created_at DESC LIMIT 1`)) as unknown as {
        rows: Array<{ id: string }>;
      }
    ).rows;
    const run = (await call(app, 'GET', `/v1/runs/${row!.id}`)).body;
    expect(run.error).toEqual({ code: 'llm_error', message: 'The LLM provider rejected the request.' });
    expect(JSON.stringify(run)).not.toContain('secret provider detail');
  });
});
