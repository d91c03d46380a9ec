import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp } from '../../src/http/app.js';
import { createTestContext } from './http-test-context.js';

describe('API keys', () => {
  let ctx: AppContext;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    ctx = await createTestContext({ API_KEYS: 'key-one, key-two' });
    app = createApp(ctx);
  });
  afterAll(() => ctx.close());

  const save = (headers: Record<string, string>) =>
    app.request('/v1/memories', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ key: 'k', content: 'guarded' }),
    });

  it('rejects /v1 requests without a valid key, with a JSON error', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const res = await save(headers);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: 'unauthorized' } });
    }
    // A header that is not a bearer token at all is a malformed request (RFC 6750).
    const malformed = await save({ authorization: 'Basic abc' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { message: expect.stringContaining('Bearer') } });
    expect(await ctx.memories.get('k')).toBeNull();
  });

  it('accepts every configured key and leaves /healthz open', async () => {
    expect((await save({ authorization: 'Bearer key-one' })).status).toBe(201);
    expect((await save({ authorization: 'Bearer key-two' })).status).toBe(200);
    expect((await app.request('/healthz')).status).toBe(200);
  });
});
