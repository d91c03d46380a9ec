import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApiKey, revokeApiKey } from '../../src/auth/api-key-store.js';
import { loadConfig } from '../../src/config/config.js';
import { createApp } from '../../src/http/app.js';
import { createTestContext } from './http-test-context.js';

const request = (app: ReturnType<typeof createApp>, path: string, headers: Record<string, string> = {}, body?: unknown) =>
  app.request(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('API keys from API_KEYS', () => {
  let ctx: AppContext;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    // A bare key (tenant `default`) and a tenant's key; a key may itself contain colons.
    ctx = await createTestContext({ API_KEYS: 'key-one, acme:key:with:colons' });
    app = createApp(ctx);
  });
  afterAll(() => ctx.close());

  const save = (headers: Record<string, string>) => request(app, '/v1/memories', headers, { key: 'k', content: 'guarded' });

  it('rejects /v1 requests without a valid key with a JSON 401 naming the bearer scheme', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong' },
      { authorization: 'Basic abc' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer a b' },
    ] as Record<string, string>[]) {
      const res = await save(headers);
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="memrag"/);
      expect(await res.json()).toMatchObject({ error: { code: 'unauthorized', message: expect.stringMatching(/key|Bearer/), details: null } });
    }
    expect(await ctx.memories.forTenant('default').get('k')).toBeNull();
  });

  it("serves each key's tenant, and leaves /healthz open", async () => {
    expect((await save({ authorization: 'Bearer key-one' })).status).toBe(201);
    expect((await save({ authorization: 'bearer key:with:colons' })).status).toBe(201);
    expect(await ctx.memories.forTenant('default').get('k')).toMatchObject({ content: 'guarded' });
    expect(await ctx.memories.forTenant('acme').get('k')).toMatchObject({ content: 'guarded' });
    expect((await app.request('/healthz')).status).toBe(200);
  });

  it('keeps only hashes of the keys in the configuration', () => {
    const config = loadConfig({ API_KEYS: 'key-one, acme:secret-two' });
    expect(config.API_KEYS).toEqual([
      { tenantId: 'default', keyHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      { tenantId: 'acme', keyHash: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    expect(JSON.stringify(config)).not.toMatch(/key-one|secret-two/);
  });

  it('refuses malformed entries at start, naming API_KEYS but not the key', () => {
    expect(() => loadConfig({ API_KEYS: 'good, bad tenant:secret-x' })).toThrow(/API_KEYS: entry 2: the tenant may contain only/);
    expect(() => loadConfig({ API_KEYS: 'acme:' })).toThrow(/API_KEYS: entry 1: the key is empty/);
    expect(() => loadConfig({ API_KEYS: 'bad tenant:secret-x' })).not.toThrow(/secret-x/);
  });
});

describe('API keys from the api_keys table', () => {
  let ctx: AppContext;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    ctx = await createTestContext({ API_KEY_CACHE_MS: '0' });
    app = createApp(ctx);
  });
  afterAll(() => ctx.close());

  it('is open (tenant default) while no key exists, and requires keys from the first one on, even once all are revoked', async () => {
    expect(ctx.auth.required).toBe(false);
    expect((await request(app, '/v1/memories', {}, { key: 'open', content: 'saved without a key' })).status).toBe(201);
    expect(await ctx.memories.forTenant('default').get('open')).toMatchObject({ content: 'saved without a key' });

    const created = await createApiKey(ctx.database.db, { tenantId: 'acme', name: 'ci' });
    expect(created.key).toMatch(/^mrk_[A-Za-z0-9_-]{43}$/);
    expect(created.key.startsWith(created.prefix)).toBe(true);
    expect((await request(app, '/v1/memories/open')).status).toBe(401);
    const acme = { authorization: `Bearer ${created.key}` };
    // The key's tenant: the default tenant's memory is not there.
    expect((await request(app, '/v1/memories/open', acme)).status).toBe(404);
    expect((await request(app, '/v1/memories', acme, { key: 'k', content: 'acme data' })).status).toBe(201);
    expect(await ctx.memories.forTenant('acme').get('k')).toMatchObject({ content: 'acme data' });

    expect(await revokeApiKey(ctx.database.db, created.id)).toMatchObject({ status: 'revoked' });
    expect((await request(app, '/v1/memories/k', acme)).status).toBe(401);
    // Revoking the last key locks the API; it never opens it again.
    expect((await request(app, '/v1/memories/open')).status).toBe(401);
    expect(ctx.auth.required).toBe(true);
  });
});

describe('rate limit per table key', () => {
  let ctx: AppContext;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    // No cache: keys created below must turn authentication on at once.
    ctx = await createTestContext({ RATE_LIMIT_PER_MINUTE: '60', RATE_LIMIT_BURST: '2', API_KEY_CACHE_MS: '0' });
    app = createApp(ctx);
  });
  afterAll(() => ctx.close());

  it('gives each stored key its own budget, and limits wrong keys by client address', async () => {
    const one = (await createApiKey(ctx.database.db, { tenantId: 'a' })).key;
    const two = (await createApiKey(ctx.database.db, { tenantId: 'a' })).key;
    const get = async (key: string) => (await request(app, '/v1/tags', { authorization: `Bearer ${key}` })).status;
    expect([await get(one), await get(one), await get(one)]).toEqual([200, 200, 429]);
    expect(await get(two)).toBe(200);
    expect([await get('guess-1'), await get('guess-2'), await get('guess-3')]).toEqual([401, 401, 429]);
  });
});
