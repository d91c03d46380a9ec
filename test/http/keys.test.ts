import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { runKeysCli } from '../../src/auth/keys-cli.js';
import { keysHttpBackend } from '../../src/auth/keys-http-backend.js';
import { createApp, createTestContext } from './http-test-context.js';
import { documentValidator } from './openapi/document-validator.js';

async function send(app: Hono, method: string, path: string, key?: string, body?: unknown) {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await app.request(path, { method, headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as any };
}

describe('/v1/keys', () => {
  let ctx: AppContext;
  let app: Hono;
  let admin: string;

  // The default cache (5 s): a key made through the server must not wait for it.
  beforeAll(async () => {
    ctx = await createTestContext();
    app = createApp(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it("a keyless server's first key is refused to a web page: cross-site, a foreign origin or host, a form's body", async () => {
    const refused: Record<string, string>[] = [
      { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
      { 'content-type': 'application/json', origin: 'http://attacker.example' },
      { 'content-type': 'application/json', host: 'rebound.attacker.example:3000' },
      { 'content-type': 'text/plain' },
    ];
    for (const headers of refused) {
      const res = await app.request('/v1/keys', { method: 'POST', headers, body: JSON.stringify({ tenantId: 'victim', scopes: ['admin', 'read', 'write'] }) });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    }
    // Nothing was made: the server still answers without a key.
    expect((await send(app, 'GET', '/v1/tags')).status).toBe(200);
  });

  it('a key created through a server without keys turns authentication on at its next request', async () => {
    expect((await send(app, 'GET', '/v1/tags')).status).toBe(200);
    const created = await send(app, 'POST', '/v1/keys', undefined, { tenantId: 'acme', name: 'ops', scopes: ['admin', 'read', 'write'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      key: expect.stringMatching(/^mrk_/),
      apiKey: { tenantId: 'acme', name: 'ops', scopes: ['read', 'write', 'admin'], revokedAt: null },
    });
    const validate = documentValidator((await (await app.request('/openapi.json')).json()) as Record<string, unknown>).response(
      'POST',
      '/v1/keys',
      201,
      'application/json',
    );
    expect(validate(created.body), JSON.stringify(validate.errors)).toBe(true);
    admin = created.body.key;
    expect((await send(app, 'GET', '/v1/tags')).status).toBe(401);
    expect((await send(app, 'GET', '/v1/tags', admin)).status).toBe(200);
  });

  it("creates keys for the admin key's own tenant, read and write by default, and lists them without secrets", async () => {
    const app2 = await send(app, 'POST', '/v1/keys', admin, { name: 'app' });
    expect(app2.status).toBe(201);
    expect(app2.body.apiKey).toMatchObject({ tenantId: 'acme', scopes: ['read', 'write'] });
    // At once: no cache stands between a new key and its first request.
    expect((await send(app, 'GET', '/v1/tags', app2.body.key)).status).toBe(200);
    expect((await send(app, 'GET', '/v1/keys', app2.body.key)).status).toBe(403);

    // A key gives no more than it holds: an admin-only key cannot mint a key that reads.
    const adminOnly = (await send(app, 'POST', '/v1/keys', admin, { name: 'admin-only', scopes: ['admin'] })).body.key;
    const escalated = await send(app, 'POST', '/v1/keys', adminOnly, { scopes: ['read', 'write', 'admin'] });
    expect(escalated.status).toBe(403);
    expect(escalated.body.error.message).toContain('read, write');
    expect((await send(app, 'POST', '/v1/keys', adminOnly, { name: 'another-admin', scopes: ['admin'] })).status).toBe(201);

    const other = await send(app, 'POST', '/v1/keys', admin, { tenantId: 'beta' });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('own tenant only') });

    const listed = await send(app, 'GET', '/v1/keys', admin);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((k: { name: string }) => k.name)).toEqual(['another-admin', 'admin-only', 'app', 'ops']);
    expect(JSON.stringify(listed.body)).not.toContain(app2.body.key);
    expect(JSON.stringify(listed.body)).not.toContain(admin);
  });

  it("revokes a key of its tenant, refused from the next request; another tenant's is not found", async () => {
    const made = (await send(app, 'POST', '/v1/keys', admin, { scopes: ['read'] })).body;
    const revoked = await send(app, 'DELETE', `/v1/keys/${made.apiKey.id}`, admin);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: made.apiKey.id, revokedAt: expect.any(String) });
    expect((await send(app, 'GET', '/v1/tags', made.key)).status).toBe(401);
    expect((await send(app, 'DELETE', `/v1/keys/${made.apiKey.id}`, admin)).body.revokedAt).toBe(revoked.body.revokedAt);

    const { createApiKey } = await import('../../src/auth/api-key-store.js');
    const beta = await createApiKey(ctx.database.db, { tenantId: 'beta' });
    const foreign = await send(app, 'DELETE', `/v1/keys/${beta.id}`, admin);
    expect(foreign.status).toBe(404);
    expect((await send(app, 'GET', '/v1/tags', beta.key)).status).toBe(200);
    expect((await send(app, 'GET', '/v1/keys', admin)).body.items.map((k: { id: string }) => k.id)).not.toContain(beta.id);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ scopes: ['owner'] }, 'scopes.0'],
      [{ scopes: [] }, 'scopes'],
      [{ scopes: ['read', 'read'] }, 'scopes'],
      [{ name: 'a\u0000b' }, 'name'],
      [{ name: 'n'.repeat(201) }, 'name'],
      [{ tenantId: 'has space' }, 'tenantId'],
      [{ secret: 'mine' }, 'secret'],
    ];
    for (const [body, field] of cases) {
      const res = await send(app, 'POST', '/v1/keys', admin, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        res.body.error.details.map((d: { path: string }) => d.path),
        JSON.stringify(body),
      ).toContain(field);
    }
    const badId = await send(app, 'DELETE', '/v1/keys/not-a-uuid', admin);
    expect(badId.status).toBe(400);
    expect(badId.body.error.details[0].path).toBe('id');
  });

  it('serves `npm run keys` through the server: create, list, revoke by prefix', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
    const keys = keysHttpBackend({ baseUrl: 'http://memrag.test', apiKey: admin, fetch: (url, init) => Promise.resolve(app.request(String(url), init)) });
    expect(await runKeysCli(['create', '--tenant', 'acme', '--name', 'cli', '--scopes', 'read'], keys, io)).toBe(0);
    const [key] = out.splice(0) as [string];
    expect(err.join('\n')).toMatch(/scopes read\.[\s\S]*acts on it from its next request/);
    expect((await send(app, 'GET', '/v1/tags', key)).status).toBe(200);
    expect(await runKeysCli(['list'], keys, io)).toBe(0);
    expect(out.join('\n')).toMatch(/ cli +read /);
    expect(await runKeysCli(['revoke', key.slice(0, 12)], keys, io)).toBe(0);
    expect((await send(app, 'GET', '/v1/tags', key)).status).toBe(401);

    // Another tenant, or no key: refused with what to do.
    err.length = 0;
    expect(await runKeysCli(['create', '--tenant', 'beta'], keys, io)).toBe(1);
    expect(err.join('\n')).toMatch(/answered 403: .*own tenant only/);
    const keyless = keysHttpBackend({ baseUrl: 'http://memrag.test', fetch: (url, init) => Promise.resolve(app.request(String(url), init)) });
    err.length = 0;
    expect(await runKeysCli(['list'], keyless, io)).toBe(1);
    expect(err.join('\n')).toMatch(/answered 401: .*set MEMRAG_API_KEY to an admin key/);
  });
});
