import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createLiveRuns } from '../../src/runs/live-runs.js';
import { type Script, type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { readSse } from '../support/sse-reader.js';
import { type JsonReply, appWithScriptedLlm, clearConversations, clearMemories, createTestContext } from './http-test-context.js';

/** Steering a running turn, queueing follow-ups, pausing and resuming (POST /v1/runs/:id/messages, /pause, /resume). */

const ALPHA = 'alpha-steering-key-0123456789';
const BETA = 'beta-steering-key-0123456789';

/** A promise the test settles: a scripted reply held until then keeps the turn running. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * Waits until the model has been asked `count` times: the turn is then in that (held) model call.
 * The run id comes earlier (the `retrieval` event), while the turn still reads what its first call
 * needs; a steer or pause sent then joins or stops the turn before its first call, as promised.
 */
async function inModelCall(llm: ScriptedLlmServer, count = 1) {
  for (let i = 0; i < 400 && llm.requests.length < count; i++) await new Promise((r) => setTimeout(r, 5));
  expect(llm.requests.length, 'model calls made').toBe(count);
}

const searchCall = { id: 'call_search', name: 'search_memories', arguments: '{"query":"tea"}' };
const userTexts = (llm: ScriptedLlmServer, i: number) => llm.requests[i]!.body.messages.filter((m) => m.role === 'user').map((m) => String(m.content));

describeOnDrivers('steering, follow-ups and pausing a run', (driver) => {
  let ctx: AppContext;
  let release: (() => Promise<void>) | undefined;
  let server: ScriptedLlmServer | undefined;

  beforeAll(async () => {
    const opened = await driver.provision();
    release = () => opened.release();
    ctx = await createTestContext({ ...opened.env, API_KEYS: `alpha:${ALPHA},beta:${BETA}` });
  });
  afterAll(async () => {
    await ctx?.close();
    await release?.();
  });
  beforeEach(async () => {
    await clearMemories(ctx);
    await clearConversations(ctx);
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function appWithLlm(script: Script): Promise<{ app: Hono; llm: ScriptedLlmServer }> {
    const made = await appWithScriptedLlm(ctx, script);
    server = made.llm;
    return made;
  }
  const send = (app: Hono, key: string, method: string, path: string, body?: unknown) =>
    app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  const call = async (app: Hono, method: string, path: string, body?: unknown, key = ALPHA): Promise<JsonReply> => {
    const res = await send(app, key, method, path, body);
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  /** Starts a streamed turn and waits for its run id (the `retrieval` event). */
  async function startStreamed(app: Hono, body: Record<string, unknown>) {
    const stream = readSse(await send(app, ALPHA, 'POST', '/v1/chat', { stream: true, ...body }));
    const { runId, conversationId } = (await stream.until('retrieval')).data as { runId: string; conversationId: string };
    return { stream, runId, conversationId };
  }
  async function settled(app: Hono, runId: string, status: string) {
    for (let i = 0; i < 200; i++) {
      const run = await call(app, 'GET', `/v1/runs/${runId}`);
      if (run.status === 200 && run.body.status === status) return run.body;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`run ${runId} never became ${status}`);
  }

  it('joins a steer to the turn before its next model call, after the tool results, and says so in the stream', async () => {
    const held = gate();
    const { app, llm } = await appWithLlm([reply.toolCalls([searchCall], { holdUntil: held.opened }), reply.text('Le thé est prêt.')]);
    const { stream, runId, conversationId } = await startStreamed(app, { message: 'Is the tea ready?' });
    await inModelCall(llm);

    const steered = await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'Answer in French', mode: 'steer' });
    expect(steered.status).toBe(202);
    expect(steered.body).toEqual({ runId, mode: 'steer' });
    held.open();

    const events = await stream.all();
    const names = events.map((e) => e.event);
    expect(events.find((e) => e.event === 'steer')?.data).toEqual({ message: 'Answer in French' });
    expect(names.indexOf('steer')).toBeGreaterThan(names.indexOf('tool_end'));
    expect(names.at(-1)).toBe('done');
    // The first call did not have it; the second has it as a user message after the tool's result.
    expect(userTexts(llm, 0)).not.toContain('Answer in French');
    const second = llm.requests[1]!.body.messages;
    expect(second.at(-1)).toMatchObject({ role: 'user', content: 'Answer in French' });
    expect(second.at(-2)).toMatchObject({ role: 'tool', tool_call_id: 'call_search' });
    // The stored turn keeps it where the model read it.
    const stored = await call(app, 'GET', `/v1/conversations/${conversationId}`);
    expect(stored.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
    expect(stored.body.messages[3].content).toBe('Answer in French');
  });

  it('answers a steer that came during the final model call with one more call', async () => {
    const held = gate();
    const { app, llm } = await appWithLlm([reply.text('Yes.', { holdUntil: held.opened }), reply.text('Oui.')]);
    const { stream, runId } = await startStreamed(app, { message: 'Is the tea ready?' });
    await inModelCall(llm);
    expect((await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'In French, please', mode: 'steer' })).status).toBe(202);
    held.open();
    const done = (await stream.all()).at(-1)!;
    expect(done).toMatchObject({ event: 'done', data: { answer: 'Oui.', status: 'completed' } });
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'In French, please' });
  });

  it('runs follow-ups as the next turns of the conversation, each its own run, in order', async () => {
    const held = gate();
    const { app, llm } = await appWithLlm([
      reply.text('Oslo is rainy.', { holdUntil: held.opened }),
      reply.text('Bergen is rainier.'),
      reply.text('Tromsø is cold.'),
    ]);
    const { stream, runId, conversationId } = await startStreamed(app, { message: 'Weather in Oslo?' });

    const first = await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'And in Bergen?', mode: 'follow_up' });
    const second = await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'And in Tromsø?', mode: 'follow_up' });
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ runId, mode: 'follow_up', followUp: { runId: expect.any(String), message: 'And in Bergen?' } });
    const f1 = first.body.followUp.runId as string;
    const f2 = second.body.followUp.runId as string;
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body.followUps).toEqual([
      { runId: f1, message: 'And in Bergen?' },
      { runId: f2, message: 'And in Tromsø?' },
    ]);
    held.open();
    expect((await stream.all()).at(-1)).toMatchObject({ event: 'done', data: { answer: 'Oslo is rainy.' } });

    // The first follow-up carries the rest of the queue, and starts it when it completes.
    const ranFirst = await settled(app, f1, 'completed');
    expect(ranFirst).toMatchObject({ conversationId, followUps: [{ runId: f2, message: 'And in Tromsø?' }] });
    await settled(app, f2, 'completed');
    // Each follow-up saw the turns before it as history.
    expect(userTexts(llm, 1).at(-1)).toContain('And in Bergen?');
    expect(llm.requests[1]!.body.messages.some((m) => m.role === 'assistant' && m.content === 'Oslo is rainy.')).toBe(true);
    expect(userTexts(llm, 2).at(-1)).toContain('And in Tromsø?');
    expect(llm.requests[2]!.body.messages.some((m) => m.role === 'assistant' && m.content === 'Bergen is rainier.')).toBe(true);
    await ctx.backgroundTasks.whenIdle();
    const stored = await call(app, 'GET', `/v1/conversations/${conversationId}`);
    expect(stored.body.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content)).toEqual([
      'Weather in Oslo?',
      'And in Bergen?',
      'And in Tromsø?',
    ]);
  });

  it('pauses a running turn at its next step boundary, and resumes it like the chat', async () => {
    const held = gate();
    const { app, llm } = await appWithLlm([reply.toolCalls([searchCall], { holdUntil: held.opened }), reply.text('Resumed answer.', { chunkSize: 5 })]);
    const { stream, runId, conversationId } = await startStreamed(app, { message: 'Is the tea ready?' });
    await inModelCall(llm);

    const paused = await call(app, 'POST', `/v1/runs/${runId}/pause`);
    expect(paused.status).toBe(202);
    expect(paused.body).toMatchObject({ id: runId, status: 'running' });
    // A steer sent before the pause takes effect waits with the run for its next model call.
    expect((await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'Be brief', mode: 'steer' })).status).toBe(202);
    held.open();

    const events = await stream.all();
    // The tool call in flight finished; the next model call was not made.
    expect(events.map((e) => e.event)).toContain('tool_end');
    expect(events.at(-1)).toMatchObject({ event: 'paused', data: { runId, conversationId, status: 'paused', toolCalls: [{ id: 'call_search' }] } });
    expect(llm.requests).toHaveLength(1);
    const run = await call(app, 'GET', `/v1/runs/${runId}`);
    expect(run.body).toMatchObject({ status: 'paused', expiresAt: expect.any(String) });
    // A paused run takes no new turn of its conversation, nor a steer; it waits for its resume.
    expect((await call(app, 'POST', '/v1/chat', { message: 'Hello?', conversationId })).body.error.code).toBe('run_waiting');
    expect((await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'x', mode: 'steer' })).body.error.code).toBe('run_not_running');
    expect((await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'x', output: 'y' }] })).status).toBe(409);

    const resumed = readSse(await send(app, ALPHA, 'POST', `/v1/runs/${runId}/resume`, { stream: true }));
    const rest = await resumed.all();
    expect(rest.find((e) => e.event === 'steer')?.data).toEqual({ message: 'Be brief' });
    expect(rest.at(-1)).toMatchObject({ event: 'done', data: { runId, status: 'completed', answer: 'Resumed answer.' } });
    // Event ids go on from the paused stream's.
    expect(Number(rest[0]!.id)).toBe(Number(events.at(-1)!.id) + 1);
    expect(llm.requests[1]!.body.messages.slice(-2)).toMatchObject([
      { role: 'tool', tool_call_id: 'call_search' },
      { role: 'user', content: 'Be brief' },
    ]);
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({ status: 'completed', stopReason: 'completed' });
  });

  it('resumes a paused run with a JSON reply, and refuses a resume of a run that waits for tool outputs', async () => {
    const held = gate();
    const tool = { type: 'function', function: { name: 'get_location', parameters: { type: 'object', properties: {} } } };
    const { app, llm } = await appWithLlm([
      reply.text('first', { holdUntil: held.opened }),
      reply.toolCalls([{ id: 'call_loc', name: 'get_location', arguments: '{}' }]),
      reply.text('Oslo.'),
    ]);
    const { stream, runId } = await startStreamed(app, { message: 'Where?', tools: [tool] });
    await inModelCall(llm);
    expect((await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'Use the tool', mode: 'steer' })).status).toBe(202);
    expect((await call(app, 'POST', `/v1/runs/${runId}/pause`)).status).toBe(202);
    held.open();
    expect((await stream.all()).at(-1)).toMatchObject({ event: 'paused' });

    const resumed = await call(app, 'POST', `/v1/runs/${runId}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ runId, status: 'requires_action', requiredAction: { toolCalls: [{ id: 'call_loc' }] } });
    const again = await call(app, 'POST', `/v1/runs/${runId}/resume`, {});
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('run_not_waiting');
    expect((await call(app, 'POST', `/v1/runs/${runId}/pause`)).body.error.code).toBe('run_not_running');
    const done = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }] });
    expect(done.body).toMatchObject({ status: 'completed', answer: 'Oslo.' });
  });

  it('refuses a steer, a follow-up, a pause and a resume of a run that has ended (409 run_finished)', async () => {
    const { app } = await appWithLlm([reply.text('Done.')]);
    const ended = await call(app, 'POST', '/v1/chat', { message: 'Hi' });
    expect(ended.body.status).toBe('completed');
    const { runId } = ended.body;
    for (const mode of ['steer', 'follow_up']) {
      const res = await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'More', mode });
      expect(res.status, mode).toBe(409);
      expect(res.body.error.code, mode).toBe('run_finished');
    }
    expect((await call(app, 'POST', `/v1/runs/${runId}/pause`)).body.error.code).toBe('run_finished');
    expect((await call(app, 'POST', `/v1/runs/${runId}/resume`)).status).toBe(409);
    // Nothing was queued.
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body.followUps).toEqual([]);
  });

  it("hides another tenant's run (404) and leaves it as it was", async () => {
    const held = gate();
    const { app, llm } = await appWithLlm([reply.text('Alpha only.', { holdUntil: held.opened })]);
    const { stream, runId } = await startStreamed(app, { message: 'Hi' });
    for (const [path, body] of [
      [`/v1/runs/${runId}/messages`, { message: 'Beta speaking', mode: 'steer' }],
      [`/v1/runs/${runId}/messages`, { message: 'Beta speaking', mode: 'follow_up' }],
      [`/v1/runs/${runId}/pause`, undefined],
      [`/v1/runs/${runId}/resume`, undefined],
    ] as const) {
      const res = await call(app, 'POST', path, body, BETA);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    held.open();
    expect((await stream.all()).at(-1)).toMatchObject({ event: 'done', data: { answer: 'Alpha only.' } });
    expect(llm.requests).toHaveLength(1);
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body.followUps).toEqual([]);
  });

  it('refuses a steer of a run that is not running in this process (409 run_not_live)', async () => {
    const held = gate();
    const { app } = await appWithLlm([reply.text('Hi.', { holdUntil: held.opened })]);
    const { stream, runId } = await startStreamed(app, { message: 'Hi' });
    // Another server's app over the same database: the run is running, but not there.
    const { app: other, llm: otherLlm } = await appWithScriptedLlm({ ...ctx, liveRuns: createLiveRuns({ graceMs: 1000 }) }, []);
    try {
      const res = await call(other, 'POST', `/v1/runs/${runId}/messages`, { message: 'x', mode: 'steer' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('run_not_live');
      expect((await call(other, 'POST', `/v1/runs/${runId}/pause`)).body.error.code).toBe('run_not_live');
      // A follow-up is stored with the run: any server takes it.
      expect((await call(other, 'POST', `/v1/runs/${runId}/messages`, { message: 'Later', mode: 'follow_up' })).status).toBe(202);
    } finally {
      await otherLlm.close();
    }
    held.open();
    await stream.all();
  });

  it('steers, pauses and resumes over a listening server', async () => {
    const held = gate();
    const { app, llm } = await appWithLlm([reply.text('First.', { holdUntil: held.opened }), reply.text('Second.')]);
    let listening!: ServerType;
    const base = await new Promise<string>((resolve) => {
      listening = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
    const post = (path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALPHA}`, 'content-type': 'application/json' },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    try {
      const stream = readSse(await post('/v1/chat', { message: 'Go', stream: true }));
      const { runId } = (await stream.until('retrieval')).data as { runId: string };
      await inModelCall(llm);
      expect((await post(`/v1/runs/${runId}/messages`, { message: 'Shorter', mode: 'steer' })).status).toBe(202);
      expect((await post(`/v1/runs/${runId}/pause`)).status).toBe(202);
      held.open();
      expect((await stream.all()).at(-1)).toMatchObject({ event: 'paused', data: { status: 'paused' } });
      const resumed = await post(`/v1/runs/${runId}/resume`);
      expect(resumed.status).toBe(200);
      expect(await resumed.json()).toMatchObject({ runId, status: 'completed', answer: 'Second.' });
      expect(llm.requests[1]!.body.messages.at(-1)).toMatchObject({ role: 'user', content: 'Shorter' });
    } finally {
      await new Promise<void>((resolve) => listening.close(() => resolve()));
    }
  });

  it('names the field of a bad message (400)', async () => {
    const { app } = await appWithLlm([]);
    const runId = '00000000-0000-4000-8000-000000000000';
    for (const [body, field] of [
      [{ message: 'x', mode: 'inject' }, 'mode'],
      [{ message: '   ', mode: 'steer' }, 'message'],
      [{ mode: 'steer' }, 'message'],
      [{ message: 'x', mode: 'steer', extra: 1 }, ''],
    ] as const) {
      const res = await call(app, 'POST', `/v1/runs/${runId}/messages`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      if (field) expect(JSON.stringify(res.body.error), JSON.stringify(body)).toContain(field);
    }
    expect((await call(app, 'POST', `/v1/runs/${runId}/resume`, { stream: 'yes' })).status).toBe(400);
    // A well-formed message on nobody's run is a 404.
    expect((await call(app, 'POST', `/v1/runs/${runId}/messages`, { message: 'x', mode: 'follow_up' })).status).toBe(404);
  });
});
