import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { AUDIT_ACTIONS } from '../../src/audit/audit-types.js';
import { createApiKey } from '../../src/auth/api-key-store.js';
import { conversationExport } from '../robustness/support/route-bases.js';
import { createApp, createTestContext } from './http-test-context.js';
import { documentValidator } from './openapi/document-validator.js';

/** Words of the content the operations touch: none may reach the audit log. */
const CONTENT = ['Biscuit', 'Tea talk', 'Green tea', 'steamed', 'Helper of Carol', 'tmp-tag-word'];

describe('the audit log: every admin operation and every deletion through the API', () => {
  let ctx: AppContext;
  let app: Hono;
  let admin: { key: string; id: string };

  async function send(method: string, path: string, body?: unknown, contentType = 'application/json') {
    const headers: Record<string, string> = { authorization: `Bearer ${admin.key}` };
    if (body !== undefined) headers['content-type'] = contentType;
    const res = await app.request(path, { method, headers, ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
    const text = await res.text();
    expect(res.status, `${method} ${path}: ${text.slice(0, 300)}`).toBeLessThan(300);
    return (text && res.headers.get('content-type')?.includes('application/json') ? JSON.parse(text) : text) as any;
  }

  beforeAll(async () => {
    ctx = await createTestContext({ API_KEY_CACHE_MS: '0' });
    app = createApp(ctx);
    const stored = await createApiKey(ctx.database.db, { tenantId: 'acme', name: 'ops' });
    admin = { key: stored.key, id: stored.id };

    await send('PUT', '/v1/memories/pet?userId=carol', { content: 'Carol has a cat called Biscuit' });
    await send('DELETE', '/v1/memories/pet?userId=carol');
    for (const key of ['a', 'b']) await send('PUT', `/v1/memories/${key}`, { content: `Biscuit note ${key}`, tags: ['tmp-tag-word'] });
    await send('DELETE', '/v1/memories?tagsAny=tmp-tag-word');
    const conversation = await send('POST', '/v1/conversations/import', conversationExport());
    await send('DELETE', `/v1/conversations/${conversation.conversation.id}`);
    const document = await send('POST', '/v1/documents', { title: 'Tea', text: '# Tea\n\nGreen tea is steamed.', format: 'markdown' });
    await send('DELETE', `/v1/documents/${document.document.id}`);
    await send('POST', '/v1/agents', { id: 'helper', name: 'Helper of Carol' });
    await send('DELETE', '/v1/agents/helper');
    await send('PUT', '/v1/memories/home?userId=carol', { content: 'Carol lives by the Biscuit bakery' });
    await send('DELETE', '/v1/users/carol');
    await send('GET', '/v1/export');
    const header = { type: 'header', format: 'memrag.export', version: 1, exportedAt: '2025-01-01T00:00:00.000Z', scope: {} };
    await send('POST', '/v1/import', `${JSON.stringify(header)}\n`, 'application/x-ndjson');
    const made = await send('POST', '/v1/keys', { name: 'temporary', scopes: ['read'] });
    await send('DELETE', `/v1/keys/${made.apiKey.id}`);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const entries = async (query = '') =>
    (await send('GET', `/v1/audit?limit=200${query}`)).items as { action: string; userId: string | null; actor: unknown; details: Record<string, unknown> }[];

  it('records each action once, naming the key that acted and never a secret or content', async () => {
    const all = await entries();
    expect(all.map((e) => e.action).sort()).toEqual([...AUDIT_ACTIONS].sort());
    for (const entry of all) expect(entry.actor, entry.action).toEqual({ type: 'api_key', keyId: `key:${admin.id}`, name: 'ops' });
    const text = JSON.stringify(all);
    for (const word of [...CONTENT, admin.key]) expect(text.includes(word), word).toBe(false);
    const validate = documentValidator((await (await app.request('/openapi.json')).json()) as Record<string, unknown>).response(
      'GET',
      '/v1/audit',
      200,
      'application/json',
    );
    expect(validate({ items: all, nextCursor: null }), JSON.stringify(validate.errors)).toBe(true);
  });

  it('says which ids and how many', async () => {
    const one = async (action: string) => {
      const found = await entries(`&action=${action}`);
      expect(found, action).toHaveLength(1);
      return found[0]!;
    };
    expect(await one('memory.deleted')).toMatchObject({ userId: 'carol', details: { key: 'pet', agentId: 'default' } });
    expect(await one('memories.deleted')).toMatchObject({ userId: null, details: { agentId: 'default', deleted: 2 } });
    expect((await one('conversation.deleted')).details).toMatchObject({ id: expect.any(String), agentId: 'default', memoriesDeleted: 0 });
    expect((await one('document.deleted')).details).toEqual({ id: expect.any(String) });
    expect((await one('agent.deleted')).details).toEqual({ id: 'helper' });
    expect(await one('user.erased')).toMatchObject({ userId: 'carol', details: { erased: { memories: 1 }, completed: true } });
    expect((await one('tenant.exported')).details).toEqual({ agentId: null, include: null });
    expect((await one('tenant.imported')).details).toMatchObject({ format: 'memrag', lines: 0, skipped: 0, errors: 0 });
    const created = await one('key.created');
    expect(created.details).toEqual({ keyId: expect.any(String), prefix: expect.stringMatching(/^mrk_/), scopes: ['read'] });
    expect((await one('key.revoked')).details).toEqual(created.details);
  });

  it('filters by action, with the user filter too, and refuses an unknown action naming the field', async () => {
    expect((await entries('&action=user.erased&userId=carol')).map((e) => e.action)).toEqual(['user.erased']);
    expect(await entries('&action=memory.deleted&userId=nobody')).toEqual([]);
    const res = await app.request('/v1/audit?action=memory.purged', { headers: { authorization: `Bearer ${admin.key}` } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { details: { path: string }[] } }).error.details.map((d) => d.path)).toEqual(['action']);
  });
});
