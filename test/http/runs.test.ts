import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type Script, type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
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
