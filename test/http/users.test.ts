import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApiKey } from '../../src/auth/api-key-store.js';
import { type JsonReply, call, clearConversations, createApp, createTestContext } from './http-test-context.js';
import { type DocumentValidator, documentValidator } from './openapi/document-validator.js';

const NONE = { memories: 0, conversations: 0, messages: 0, turns: 0, historyEvents: 0, runs: 0, jobs: 0, attachments: 0, blocks: 0, blockEvents: 0 };

describe('DELETE /v1/users/:userId', () => {
  let ctx: AppContext;
  let app: Hono;
  let validator: DocumentValidator;
  beforeAll(async () => {
    ctx = await createTestContext();
    app = createApp(ctx);
    validator = documentValidator((await (await app.request('/openapi.json')).json()) as Record<string, unknown>);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const expectDocumented = (method: string, path: string, res: JsonReply) => {
    const validate = validator.response(method, path, res.status, 'application/json');
    expect(validate(res.body), JSON.stringify(validate.errors)).toBe(true);
  };

  it("erases the user's memories and conversations across agents, and answers what it erased", async () => {
    await clearConversations(ctx);
    for (const agentId of ['default', 'helper']) {
      expect((await call(app, 'PUT', `/v1/memories/tea?agentId=${agentId}`, { content: 'Alice drinks green tea', userId: 'alice' })).status).toBe(201);
      const chat = await call(app, 'POST', '/v1/chat', { message: 'What does Alice drink?', userId: 'alice', agentId });
      expect(chat.status, JSON.stringify(chat.body)).toBe(200);
    }
    expect((await call(app, 'PUT', '/v1/memories/tea', { content: 'Bob drinks coffee', userId: 'bob' })).status).toBe(201);
    await ctx.backgroundTasks.whenIdle();

    const res = await call(app, 'DELETE', '/v1/users/alice');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Each chat turn: a question and an answer, a run, and a row of the turns corpus (its after-turn hook).
    expect(res.body.erased).toEqual({
      memories: 2,
      conversations: 2,
      messages: 4,
      turns: 2,
      historyEvents: 2,
      runs: 2,
      jobs: 0,
      attachments: 0,
      blocks: 0,
      blockEvents: 0,
    });
    expectDocumented('DELETE', '/v1/users/{userId}', res);

    for (const agentId of ['default', 'helper']) {
      expect((await call(app, 'GET', `/v1/memories/tea?agentId=${agentId}&userId=alice`)).status).toBe(404);
      expect((await call(app, 'GET', `/v1/conversations?agentId=${agentId}&userId=alice`)).body.items).toEqual([]);
    }
    expect((await call(app, 'GET', '/v1/memories/tea?userId=bob')).body.memory.content).toBe('Bob drinks coffee');
    expect((await call(app, 'DELETE', '/v1/users/alice')).body).toEqual({ erased: NONE });
  });

  it('answers zero counts for a user with no data, and records the erasure as done by the open server', async () => {
    const res = await call(app, 'DELETE', '/v1/users/nobody-here');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ erased: NONE });
    const audit = await call(app, 'GET', '/v1/audit?userId=nobody-here');
    expect(audit.body.items).toEqual([
      {
        id: expect.any(Number),
        action: 'user.erased',
        userId: 'nobody-here',
        actor: { type: 'open' },
        details: { erased: NONE, originsMarked: { memories: 0, historyEvents: 0 }, completed: true },
        at: expect.any(String),
      },
    ]);
  });

  it('refuses a user id that is missing, blank, too long or holds control characters, naming the field and writing nothing', async () => {
    const before = (await call(app, 'GET', '/v1/audit?limit=200')).body.items.length;
    const bad = [
      '/v1/users/',
      '/v1/users',
      '/v1/users/%20',
      `/v1/users/${'u'.repeat(129)}`,
      '/v1/users/a%00b',
      '/v1/users/a%0Ab',
      '/v1/users/a%1Fb',
      '/v1/users/a%7Fb',
      '/v1/users/a%2Fb',
      '/v1/users/%C3%A9',
    ];
    for (const path of bad) {
      const res = await call(app, 'DELETE', path);
      expect(res.status, path).toBe(400);
      expect(res.body.error.code, path).toBe('validation_error');
      expect(
        res.body.error.details.map((d: { path: string }) => d.path),
        path,
      ).toEqual(['userId']);
    }
    const unknown = await call(app, 'DELETE', '/v1/users/alice?force=true');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details).toEqual([{ path: 'force', message: 'unknown field' }]);
    expect((await call(app, 'GET', '/v1/audit?limit=200')).body.items).toHaveLength(before);
  });
});

describe('DELETE /v1/users/:userId with API keys', () => {
  let ctx: AppContext;
  let app: Hono;
  beforeAll(async () => {
    ctx = await createTestContext({ API_KEYS: 'acme:env-key-0123456789', API_KEY_CACHE_MS: '0' });
    app = createApp(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const as = async (key: string, method: string, path: string) => {
    const res = await app.request(path, { method, headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("records the key that erased: its id, and a stored key's name", async () => {
    const stored = await createApiKey(ctx.database.db, { tenantId: 'acme', name: 'privacy desk' });
    expect((await as('env-key-0123456789', 'DELETE', '/v1/users/carol')).status).toBe(200);
    expect((await as(stored.key, 'DELETE', '/v1/users/carol')).status).toBe(200);
    const page = await as(stored.key, 'GET', '/v1/audit?userId=carol');
    expect(page.body.items.map((e: { actor: unknown }) => e.actor)).toEqual([
      { type: 'api_key', keyId: `key:${stored.id}`, name: 'privacy desk' },
      { type: 'api_key', keyId: 'env:1', name: null },
    ]);
  });

  it('needs a key like every /v1 route', async () => {
    const res = await app.request('/v1/users/carol', { method: 'DELETE' });
    expect(res.status).toBe(401);
  });
});
