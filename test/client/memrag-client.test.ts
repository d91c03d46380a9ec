import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createMemragClient } from '../../src/client/memrag-client.js';
import { listen, type ListeningServer } from '../robustness/support/listening-server.js';
import { createApp, createTestContext } from '../http/http-test-context.js';

describe('createMemragClient against a listening server', () => {
  describe('without API keys', () => {
    let ctx: AppContext;
    let server: ListeningServer;
    beforeAll(async () => {
      ctx = await createTestContext();
      server = await listen(createApp(ctx));
    });
    afterAll(async () => {
      await server?.close();
      await ctx?.close();
    });

    it('saves, lists by tag (repeated query parameters), counts tags and searches', async () => {
      // A trailing slash, as people paste base URLs: the client must not send `//v1`.
      const client = createMemragClient({ baseUrl: `${server.base}/` });
      const saved = await client.POST('/v1/memories', { body: { key: 'tea', content: 'Ada drinks green tea every morning', tags: ['drinks', 'ada'] } });
      expect(saved.response.status).toBe(201);
      expect(saved.data?.memory.key).toBe('tea');
      await client.POST('/v1/memories', { body: { key: 'bike', content: 'Ada rides a red bicycle', tags: ['ada'] } });

      const listed = await client.GET('/v1/memories', { params: { query: { tagsAll: ['ada', 'drinks'] } } });
      expect(listed.data?.items.map((m) => m.key)).toEqual(['tea']);
      const tags = await client.GET('/v1/tags');
      expect(tags.data?.tags).toEqual(
        expect.arrayContaining([
          { tag: 'ada', count: 2 },
          { tag: 'drinks', count: 1 },
        ]),
      );

      const found = await client.POST('/v1/memories/search', { body: { query: 'bicycle', mode: 'text' } });
      expect(found.data?.hits[0]?.memory.key).toBe('bike');
      expect(found.data?.hits[0]?.ranks.text).toBe(1);
    });

    it('resolves a 4xx to the API error, naming the field, without throwing', async () => {
      const client = createMemragClient({ baseUrl: server.base });
      const bad = await client.POST('/v1/memories', { body: { content: '' } });
      expect(bad.response.status).toBe(400);
      expect(bad.data).toBeUndefined();
      expect(bad.error?.error.code).toBe('validation_error');
      expect(JSON.stringify(bad.error?.error.details)).toContain('content');
    });
  });

  describe('with API keys', () => {
    let ctx: AppContext;
    let server: ListeningServer;
    beforeAll(async () => {
      ctx = await createTestContext({ API_KEYS: 'acme:client-test-key' });
      server = await listen(createApp(ctx));
    });
    afterAll(async () => {
      await server?.close();
      await ctx?.close();
    });

    it('sends the key as a Bearer token, and a missing one gets the 401', async () => {
      const keyed = await createMemragClient({ baseUrl: server.base, apiKey: 'client-test-key' }).GET('/v1/tags');
      expect(keyed.response.status).toBe(200);
      const keyless = await createMemragClient({ baseUrl: server.base }).GET('/v1/tags');
      expect(keyless.response.status).toBe(401);
      expect(keyless.error?.error.code).toBe('unauthorized');
    });
  });
});
