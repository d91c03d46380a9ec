import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeError } from '../../src/api/error-mapping.js';
import { type AppContext, createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type Script, type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { appWithScriptedLlm, call } from './http-test-context.js';
import { LOCATION_TOOL, locationCall } from './support/runs-test-setup.js';

/**
 * A run keeps the model's reasoning (apart from the answer and the stored turn), and
 * `GET /v1/runs/{id}` shows it only to a reader who asks with `?includeReasoning=true`.
 */
describeOnDrivers('a run keeps its reasoning, shown only when asked', (driver) => {
  let ctx: AppContext;
  let release: (() => Promise<void>) | undefined;
  let server: ScriptedLlmServer | undefined;

  beforeAll(async () => {
    const opened = await driver.provision();
    release = () => opened.release();
    const config = loadConfig({ ...opened.env, LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off' });
    ctx = await createAppContext(config, { embedder: createHashEmbedder(64), describeError });
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(async () => {
    await ctx?.close();
    await release?.();
  });

  async function appWith(script: Script): Promise<Hono> {
    const made = await appWithScriptedLlm(ctx, script);
    server = made.llm;
    return made.app;
  }

  it("keeps a completed turn's reasoning: absent from GET without the flag, shown with it, never in the stored turn", async () => {
    const app = await appWith([reply.text('Tea.', { reasoning: 'SECRET-THOUGHT: the user asked about drinks.' })]);
    const chat = await call(app, 'POST', '/v1/chat', { message: 'What should I drink?' });
    expect(chat.status).toBe(200);
    expect(chat.body.answer).toBe('Tea.');
    // The chat did not ask: its reply carries none.
    expect(chat.body.reasoning).toBeUndefined();

    const plain = await call(app, 'GET', `/v1/runs/${chat.body.runId}`);
    expect(plain.status).toBe(200);
    expect(plain.body.status).toBe('completed');
    expect(JSON.stringify(plain.body)).not.toContain('SECRET-THOUGHT');
    expect((await call(app, 'GET', `/v1/runs/${chat.body.runId}?includeReasoning=false`)).body.reasoning).toBeUndefined();

    const asked = await call(app, 'GET', `/v1/runs/${chat.body.runId}?includeReasoning=true`);
    expect(asked.status).toBe(200);
    expect(asked.body.reasoning).toBe('SECRET-THOUGHT: the user asked about drinks.');

    const turns = await call(app, 'GET', `/v1/conversations/${chat.body.conversationId}`);
    expect(turns.status).toBe(200);
    expect(JSON.stringify(turns.body)).toContain('Tea.');
    expect(JSON.stringify(turns.body)).not.toContain('SECRET-THOUGHT');
  });

  it("shows a paused run's reasoning so far, then the whole turn's once it is resumed and completed", async () => {
    const app = await appWith([
      reply.toolCalls([locationCall], { reasoning: 'First: I need the location.' }),
      reply.text('You are in Oslo.', { reasoning: 'Second: Oslo it is.' }),
    ]);
    const paused = await call(app, 'POST', '/v1/chat', { message: 'Where am I?', tools: [LOCATION_TOOL], includeReasoning: true });
    expect(paused.body.status).toBe('requires_action');
    const runId = paused.body.runId as string;
    expect((await call(app, 'GET', `/v1/runs/${runId}?includeReasoning=true`)).body).toMatchObject({
      status: 'requires_action',
      reasoning: 'First: I need the location.',
    });
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body.reasoning).toBeUndefined();

    const done = await call(app, 'POST', `/v1/runs/${runId}/tool-outputs`, { toolOutputs: [{ toolCallId: 'call_loc', output: 'Oslo' }] });
    expect(done.body).toMatchObject({ status: 'completed', answer: 'You are in Oslo.' });
    const kept = await call(app, 'GET', `/v1/runs/${runId}?includeReasoning=true`);
    expect(kept.body.reasoning).toBe('First: I need the location.\n\nSecond: Oslo it is.');
  });

  it('keeps nothing for a turn whose model gave no reasoning', async () => {
    const app = await appWith([reply.text('Plain answer.')]);
    const chat = await call(app, 'POST', '/v1/chat', { message: 'Anything?' });
    const asked = await call(app, 'GET', `/v1/runs/${chat.body.runId}?includeReasoning=true`);
    expect(asked.status).toBe(200);
    expect(asked.body).not.toHaveProperty('reasoning');
  });

  it('refuses an includeReasoning that is not true or false, naming it', async () => {
    const app = await appWith([]);
    const res = await call(app, 'GET', '/v1/runs/00000000-0000-4000-8000-000000000000?includeReasoning=yes');
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('includeReasoning');
  });
});
