import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type ScriptedLlmServer, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { call, createApp, createTestContext } from './http-test-context.js';

/** GET /v1/providers and /v1/providers/:name/models: the deployment's providers, and the models each offers. */
describe('providers and their models', () => {
  let ctx: AppContext;
  let app: Hono;
  let base: ScriptedLlmServer;
  let local: ScriptedLlmServer;

  beforeAll(async () => {
    base = await startScriptedLlmServer([], { models: ['gpt-test', 'gpt-test-mini'] });
    local = await startScriptedLlmServer([], { models: ['llama3.2:3b'] });
    ctx = await createTestContext({
      LLM_BASE_URL: base.url,
      LLM_API_KEY: 'sk-default-secret',
      LLM_MODEL: 'gpt-test',
      // Port 9 (discard) on loopback: nothing listens, so the provider cannot be reached.
      LLM_PROVIDERS: JSON.stringify({ local: { baseURL: local.url, apiKey: 'sk-local-secret' }, down: { baseURL: 'http://127.0.0.1:9/v1' } }),
    });
    app = createApp(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
    await base?.close();
    await local?.close();
  });

  it('lists the default provider and LLM_PROVIDERS with base URL and default model, never a key', async () => {
    const res = await call(app, 'GET', '/v1/providers');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      providers: [
        { name: 'default', baseURL: base.url, defaultModel: 'gpt-test' },
        { name: 'local', baseURL: local.url, defaultModel: 'gpt-test' },
        { name: 'down', baseURL: 'http://127.0.0.1:9/v1', defaultModel: 'gpt-test' },
      ],
    });
    expect(JSON.stringify(res.body)).not.toContain('secret');
  });

  it("lists the models of a provider's /models route, asked once for a few minutes", async () => {
    const first = await call(app, 'GET', '/v1/providers/local/models');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      provider: 'local',
      models: [{ id: 'llama3.2:3b', ownedBy: 'scripted', created: 1_700_000_000 }],
      fetchedAt: expect.any(String),
    });
    const second = await call(app, 'GET', '/v1/providers/local/models');
    expect(second.body).toEqual(first.body);
    expect(local.modelListRequests).toBe(1);

    // Cached per provider: the default one is asked on its own.
    const defaults = await call(app, 'GET', '/v1/providers/default/models');
    expect(defaults.body.models.map((m: { id: string }) => m.id)).toEqual(['gpt-test', 'gpt-test-mini']);
    expect(base.modelListRequests).toBe(1);
  });

  it('answers 404 for an unknown provider and 502 with a JSON error for one that cannot be reached', async () => {
    const unknown = await call(app, 'GET', '/v1/providers/nope/models');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('not_found');

    const down = await call(app, 'GET', '/v1/providers/down/models');
    expect(down.status).toBe(502);
    expect(down.headers.get('content-type')).toContain('application/json');
    expect(down.body.error.code).toBe('llm_unavailable');
    expect(down.body.error.message).toContain('"down"');
  });
});
