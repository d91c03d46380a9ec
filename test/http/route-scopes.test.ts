import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../src/auth/api-key-scopes.js';
import { createApiKey } from '../../src/auth/api-key-store.js';
import { MCP_TOOL_ROUTES } from '../../src/http/mcp-tool-scopes.js';
import { ROUTE_SCOPES, scopeOfRequest } from '../../src/http/route-scopes.js';
import { createApp, createTestContext } from './http-test-context.js';

const ABSENT = '00000000-0000-4000-8000-000000000000';

describe('scopes of API keys, route by route', () => {
  let ctx: AppContext;
  let app: Hono;
  let document: { paths: Record<string, Record<string, unknown>> };
  /** A key of each scope alone, and one with every scope but it. */
  const only = {} as Record<ApiKeyScope, string>;
  const allBut = {} as Record<ApiKeyScope, string>;

  beforeAll(async () => {
    ctx = await createTestContext({ API_KEY_CACHE_MS: '0' });
    app = createApp(ctx);
    for (const scope of API_KEY_SCOPES) {
      only[scope] = (await createApiKey(ctx.database.db, { tenantId: 'acme', scopes: [scope] })).key;
      allBut[scope] = (await createApiKey(ctx.database.db, { tenantId: 'acme', scopes: API_KEY_SCOPES.filter((s) => s !== scope) })).key;
    }
    document = (await (await app.request('/openapi.json')).json()) as typeof document;
  });
  afterAll(async () => {
    await ctx?.close();
  });

  const documented = () => Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((m) => `${m.toUpperCase()} ${path}`));

  it('has a scope for every route of the OpenAPI document, and none for a route that is gone', () => {
    const routes = documented();
    expect(routes.length).toBeGreaterThan(40);
    expect(
      routes.filter((r) => !(r in ROUTE_SCOPES)),
      'routes without a scope in src/http/route-scopes.ts',
    ).toEqual([]);
    expect(
      Object.keys(ROUTE_SCOPES).filter((r) => !routes.includes(r)),
      'scopes of routes that no longer exist',
    ).toEqual([]);
    // Only what lies outside /v1 goes without a key.
    for (const [route, scope] of Object.entries(ROUTE_SCOPES)) expect(scope === 'public', route).toBe(!route.split(' ')[1]!.startsWith('/v1/'));
  });

  it('gives the admin operations to admin keys only', () => {
    const admin = Object.entries(ROUTE_SCOPES)
      .filter(([, scope]) => scope === 'admin')
      .map(([route]) => route)
      .sort();
    expect(admin).toEqual(
      [
        'DELETE /v1/agents/{id}',
        'DELETE /v1/keys/{id}',
        'DELETE /v1/users/{userId}',
        'GET /v1/audit',
        'GET /v1/export',
        'GET /v1/keys',
        'POST /v1/import',
        'POST /v1/keys',
      ].sort(),
    );
  });

  // A key gives a new key only scopes it holds: one with admin alone asks for admin alone.
  const BODIES: Record<string, unknown> = { 'POST /v1/keys': { scopes: ['admin'] } };
  const request = (method: string, path: string, key: string) => {
    const body = BODIES[`${method} ${path}`];
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    return app.request(path.replace(/\{[^}]+\}/g, ABSENT), { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  };

  for (const [route, scope] of Object.entries(ROUTE_SCOPES)) {
    if (scope === 'public') continue;
    const [method, path] = route.split(' ') as [string, string];
    it(`${route} needs ${scope}: 403 forbidden naming it without, served with it alone`, async () => {
      const refused = await request(method, path, allBut[scope]);
      expect(refused.status).toBe(403);
      // In OpenAI's shape on its routes, in ours elsewhere: both carry the code and the message.
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('forbidden');
      expect(error.message).toContain(`"${scope}" scope`);
      const served = await request(method, path, only[scope]);
      // Whatever the route makes of a request without its inputs (400, 404, 200), it is not refused for the key.
      expect([401, 403], `${route}: ${served.status}`).not.toContain(served.status);
      await served.body?.cancel();
    });
  }

  it('refuses each MCP tool to a key without the scope of the route it stands for', async () => {
    const mcp = (key: string, body: unknown) =>
      app.request('/mcp', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(body),
      });
    const listed = await mcp(only.read, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const tools = ((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools.map((t) => t.name);
    expect(tools.sort()).toEqual(Object.keys(MCP_TOOL_ROUTES).sort());
    for (const tool of tools) {
      const scope = ROUTE_SCOPES[MCP_TOOL_ROUTES[tool]!] as ApiKeyScope;
      const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: tool, arguments: {} } };
      const refused = await mcp(allBut[scope], call);
      expect(refused.status, tool).toBe(403);
      expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'forbidden',
        message: expect.stringContaining(`"${scope}" scope, which the MCP tool "${tool}" needs`),
      });
      // In a batch too.
      expect((await mcp(allBut[scope], [{ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }, call])).status, tool).toBe(403);
      const served = await mcp(only[scope], call);
      expect(served.status, tool).toBe(200);
    }
  });

  it('finds the literal route before a parameter, and needs admin for a path no route declares', () => {
    expect(scopeOfRequest('POST', '/v1/memories/search')).toBe('read');
    expect(scopeOfRequest('GET', '/v1/memories/search')).toBe('read');
    expect(scopeOfRequest('DELETE', '/v1/memories/search')).toBe('write');
    expect(scopeOfRequest('POST', '/v1/chat/completions')).toBe('write');
    expect(scopeOfRequest('HEAD', '/v1/memories/')).toBe('read');
    expect(scopeOfRequest('GET', '/v1/no-such-route')).toBe('admin');
    expect(scopeOfRequest('PUT', '/v1/agents/a')).toBe('admin');
    expect(scopeOfRequest('GET', '/healthz')).toBe('public');
  });
});

describe('scopes where keys carry all of them', () => {
  it('allows everything without keys, as a server that never had any', async () => {
    const ctx = await createTestContext();
    try {
      const app = createApp(ctx);
      expect((await app.request('/v1/audit')).status).toBe(200);
      expect((await app.request('/v1/users/nobody', { method: 'DELETE' })).status).toBe(200);
    } finally {
      await ctx.close();
    }
  });

  it('gives API_KEYS entries every scope', async () => {
    const ctx = await createTestContext({ API_KEYS: 'acme:an-env-key-of-acme' });
    try {
      const app = createApp(ctx);
      const headers = { authorization: 'Bearer an-env-key-of-acme' };
      expect((await app.request('/v1/audit', { headers })).status).toBe(200);
      expect((await app.request('/v1/memories', { headers })).status).toBe(200);
      expect((await app.request('/v1/memories/k', { method: 'DELETE', headers })).status).toBe(404);
    } finally {
      await ctx.close();
    }
  });
});
