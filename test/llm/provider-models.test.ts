import { describe, expect, it } from 'vitest';
import { ProviderUnavailableError, configuredProviders, createProviderModels } from '../../src/llm/provider-models.js';

const providers = [{ name: 'local', baseURL: 'http://models.test/v1/', defaultModel: null, apiKey: 'sk-1' }];

/** A fetch that answers from a list of replies, recording what it was asked. */
function scriptedFetch(replies: Array<() => Response>) {
  const asked: Array<{ url: string; authorization: string | null }> = [];
  const fetch = (async (url: string, init?: RequestInit) => {
    asked.push({ url, authorization: new Headers(init?.headers).get('authorization') });
    const next = replies.shift();
    if (!next) throw new Error('connect ECONNREFUSED');
    return next();
  }) as unknown as typeof globalThis.fetch;
  return { fetch, asked };
}
const list =
  (...ids: string[]) =>
  () =>
    Response.json({ object: 'list', data: ids.map((id) => ({ id })) });

describe('provider models', () => {
  it('asks /models with the key, keeps the list for its time to live, then asks again', async () => {
    let clock = 0;
    const { fetch, asked } = scriptedFetch([list('a'), list('a', 'b')]);
    const models = createProviderModels({ providers, ttlMs: 1000, timeoutMs: 1000, fetch, now: () => clock });
    expect((await models.models('local')).models).toEqual([{ id: 'a', ownedBy: null, created: null }]);
    clock = 999;
    await models.models('local');
    expect(asked).toEqual([{ url: 'http://models.test/v1/models', authorization: 'Bearer sk-1' }]);
    clock = 1000;
    expect((await models.models('local')).models.map((m) => m.id)).toEqual(['a', 'b']);
    expect(asked).toHaveLength(2);
  });

  it('shares one call between requests at once, and keeps no failure', async () => {
    const { fetch, asked } = scriptedFetch([() => new Response('nope', { status: 503 }), list('a')]);
    const models = createProviderModels({ providers, timeoutMs: 1000, fetch });
    const both = await Promise.allSettled([models.models('local'), models.models('local')]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect((both[0] as PromiseRejectedResult).reason).toBeInstanceOf(ProviderUnavailableError);
    expect(asked).toHaveLength(1);
    expect((await models.models('local')).models.map((m) => m.id)).toEqual(['a']);
  });

  it('refuses an answer that is not a model list', async () => {
    const { fetch } = scriptedFetch([() => Response.json({ models: [] })]);
    await expect(createProviderModels({ providers, timeoutMs: 1000, fetch }).models('local')).rejects.toThrow(/did not answer GET \/models with a model list/);
  });

  it('lists no default provider without LLM_BASE_URL or LLM_API_KEY, and OpenAI with the key alone', () => {
    const none = configuredProviders({ LLM_BASE_URL: undefined, LLM_API_KEY: undefined, LLM_MODEL: 'm', LLM_PROVIDERS: { x: { baseURL: 'http://x/v1' } } });
    expect(none.map((p) => p.name)).toEqual(['x']);
    const openai = configuredProviders({ LLM_BASE_URL: undefined, LLM_API_KEY: 'sk', LLM_MODEL: undefined, LLM_PROVIDERS: {} });
    expect(openai).toEqual([{ name: 'default', baseURL: 'https://api.openai.com/v1', defaultModel: null, apiKey: 'sk' }]);
  });
});
