import { afterEach, describe, expect, it } from 'vitest';
import { llmProviderFromConfig } from '../../src/llm/llm-from-config.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { call, createApp, createTestContext } from '../http/http-test-context.js';
import { type ScriptedLlmServer, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

let server: ScriptedLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('llmProviderFromConfig', () => {
  it('builds a provider from a model plus a base URL or an API key', () => {
    expect(llmProviderFromConfig(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:11434/v1', LLM_MODEL: 'llama3' }))?.model).toBe('llama3');
    expect(llmProviderFromConfig(loadConfig({ LLM_API_KEY: 'sk-x', LLM_MODEL: 'gpt-4o-mini' }))?.model).toBe('gpt-4o-mini');
  });

  it('is undefined when the configuration is missing or partial', () => {
    expect(llmProviderFromConfig(loadConfig({}))).toBeUndefined();
    expect(llmProviderFromConfig(loadConfig({ LLM_MODEL: 'm' }))).toBeUndefined();
    expect(llmProviderFromConfig(loadConfig({ LLM_BASE_URL: 'http://127.0.0.1:1/v1' }))).toBeUndefined();
  });

  it('retries transient errors as many times as LLM_MAX_ATTEMPTS allows', async () => {
    server = await startScriptedLlmServer([reply.error(500), reply.error(500), reply.error(500), reply.text('late')]);
    const llm = llmProviderFromConfig(
      loadConfig({ LLM_BASE_URL: server.url, LLM_MODEL: 'm', LLM_MAX_ATTEMPTS: '2', LLM_RETRY_BASE_MS: '1', LLM_RETRY_MAX_MS: '5' }),
    )!;
    await expect(llm.complete({ messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ name: 'TransientError', attempts: 2 });
    expect(server.requests).toHaveLength(2);
  });

  it('refuses a malformed price table, naming LLM_PRICES', () => {
    expect(() => loadConfig({ LLM_PRICES: '{"m": {"inputPerMTok": "cheap"}}' })).toThrow(ConfigError);
    expect(() => loadConfig({ LLM_PRICES: 'not json' })).toThrow(/LLM_PRICES/);
  });
});

describe('POST /v1/chat with LLM_PRICES', () => {
  it('reports the cost of the turn from the configured price table', async () => {
    server = await startScriptedLlmServer([reply.text('Hello.', { usage: { prompt_tokens: 1000, completion_tokens: 500 } })]);
    const ctx = await createTestContext({
      LLM_BASE_URL: server.url,
      LLM_MODEL: 'priced-model',
      LLM_PRICES: JSON.stringify({ 'priced-model': { inputPerMTok: 2, outputPerMTok: 8 } }),
    });
    try {
      const res = await call(createApp(ctx), 'POST', '/v1/chat', { message: 'Say hello' });
      expect(res.status).toBe(200);
      expect(res.body.usage).toMatchObject({ promptTokens: 1000, completionTokens: 500 });
      // 1000 × $2/M + 500 × $8/M
      expect(res.body.costUsd).toBeCloseTo(0.006, 9);
    } finally {
      await ctx.close();
    }
  });
});
