import { Validator } from '@seriousme/openapi-schema-validator';
import type { Hono } from 'hono';
import { inspectRoutes } from 'hono/dev';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApiKeyAuthenticator } from '../../src/auth/api-key-authenticator.js';
import { parseEnvApiKeys } from '../../src/auth/env-api-keys.js';
import { toOpenApiPath } from '../../src/http/openapi/openapi-document.js';
import { call, clearMemories, createApp, createTestContext } from './http-test-context.js';
import { type DocumentValidator, documentValidator } from './openapi/document-validator.js';

let ctx: AppContext;
let app: Hono;
let document: any;
let validator: DocumentValidator;

beforeAll(async () => {
  ctx = await createTestContext();
  app = createApp(ctx);
  const res = await app.request('/openapi.json');
  document = await res.json();
  validator = documentValidator(document);
});
afterAll(async () => {
  await ctx?.close();
});

describe('GET /openapi.json', () => {
  it('serves a valid OpenAPI 3.1 document as JSON', async () => {
    const res = await app.request('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const served = (await res.json()) as any;
    const checker = new Validator();
    const result = await checker.validate(served);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(served.openapi).toBe('3.1.0');
  });

  it('documents every route registered on the app, with its method, and nothing else', () => {
    // Handlers take (c); middleware takes (c, next): that is how Hono itself tells them apart.
    // `/mcp` is one JSON-RPC endpoint whose operations MCP's `tools/list` describes, not a REST route.
    const registered = new Set(
      inspectRoutes(app)
        .filter((r) => !r.isMiddleware && r.path !== '/mcp')
        .map((r) => `${r.method} ${toOpenApiPath(r.path)}`),
    );
    const documented = new Set(
      Object.entries<Record<string, unknown>>(document.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    expect(registered.size).toBeGreaterThan(15);
    expect(
      [...registered].filter((r) => !documented.has(r)),
      'routes missing from the OpenAPI document',
    ).toEqual([]);
    expect(
      [...documented].filter((d) => !registered.has(d)),
      'documented operations no route answers',
    ).toEqual([]);
  });

  it('is open without an API key, like /healthz, and then names the bearer scheme', async () => {
    const keyed = createApp({ ...ctx, auth: createApiKeyAuthenticator({ db: ctx.database.db, envKeys: parseEnvApiKeys('secret-key').keys, cacheTtlMs: 0 }) });
    expect((await keyed.request('/v1/memories')).status).toBe(401);
    const res = await keyed.request('/openapi.json');
    expect(res.status).toBe(200);
    const served = (await res.json()) as any;
    expect(served.components.securitySchemes.bearerAuth.scheme).toBe('bearer');
    expect(served.paths['/v1/memories'].get.security).toEqual([{ bearerAuth: [] }]);
    expect((await keyed.request('/docs')).status).toBe(200);
  });
});

/**
 * The document's request schemas, compiled by a JSON Schema validator, judge sample bodies as the
 * route does: accepted (any status but 400) or rejected (400). Samples avoid what no JSON Schema
 * expresses here (blank strings, NUL, overlap against maxTokens, a reranker not configured).
 */
describe('request schemas in the document', () => {
  const cases: { method: string; path: string; docPath?: string; bodies: unknown[] }[] = [
    {
      method: 'POST',
      path: '/v1/memories',
      bodies: [
        { content: 'Alice drinks tea', tags: ['alice'], metadata: { from: 'test' } },
        { key: 'k1', content: 'x', agentId: 'agent-1' },
        {},
        { content: 5 },
        { content: 'x', extra: true },
        { content: 'x', tags: ['a'.repeat(65)] },
        { content: 'x', tags: 'alice' },
        { content: 'x', agentId: 'no spaces allowed' },
        { content: 'x', metadata: ['not', 'an', 'object'] },
        { content: 'x'.repeat(100_001) },
      ],
    },
    {
      method: 'PUT',
      path: '/v1/memories/tea',
      docPath: '/v1/memories/{key}',
      bodies: [{ content: 'Green' }, { content: 'Green', key: 'tea' }, { content: null }],
    },
    {
      method: 'POST',
      path: '/v1/memories/search',
      bodies: [
        { query: 'tea' },
        { query: 'tea', topK: 3, mode: 'text', tagsAll: ['alice'] },
        { query: 'tea', weights: { vector: 1, text: 2 } },
        { topK: 3 },
        { query: 'tea', topK: 0 },
        { query: 'tea', topK: 101 },
        { query: 'tea', topK: 2.5 },
        { query: 'tea', mode: 'fuzzy' },
        { query: 'tea', minScore: 2 },
        { query: 'tea', weights: { vector: 1 } },
      ],
    },
    {
      method: 'DELETE',
      path: '/v1/memories',
      bodies: [{ tagsAny: ['nothing-has-this'] }, { tagsAny: 'nothing-has-this' }, { tagsAny: ['x'], because: 'typo' }],
    },
    {
      method: 'POST',
      path: '/v1/search',
      bodies: [
        { query: 'tea' },
        { query: 'tea', mode: 'vector', reranker: 'lexical', candidateK: 20 },
        { query: 'tea', candidateK: 1001 },
        { query: 'tea', reranker: 'magic' },
        { query: ['tea'] },
      ],
    },
    {
      method: 'POST',
      path: '/v1/documents',
      bodies: [
        { text: 'Green tea is steamed.', title: 'Tea', format: 'markdown', maxTokens: 64, overlapTokens: 8 },
        { text: 'x', format: 'pdf' },
        { text: 'x', maxTokens: 4 },
        { title: 'no text' },
        { text: 'x', source: 's'.repeat(2049) },
      ],
    },
    {
      method: 'POST',
      path: '/v1/conversations/import',
      bodies: [
        {},
        { format: 'memrag.conversation', version: 2 },
        {
          format: 'memrag.conversation',
          version: 1,
          conversation: {
            id: '8c4f7a43-3b7e-4c58-9d2e-6f1a2b3c4d5e',
            agentId: 'default',
            title: 't',
            createdAt: '2024-01-01T00:00:00Z',
            updatedAt: '2024-01-01T00:00:00Z',
          },
          messages: [{ seq: 1, turn: 1, role: 'user', content: 'hi' }],
        },
        {
          format: 'memrag.conversation',
          version: 1,
          conversation: { id: 'c', agentId: 'default', title: 't', createdAt: '2024-01-01T00:00:00Z', updatedAt: '2024-01-01T00:00:00Z' },
          messages: [{ seq: 1, turn: 1, role: 'user', content: 'hi' }],
        },
        {
          format: 'memrag.conversation',
          version: 1,
          conversation: {
            id: '8c4f7a43-3b7e-4c58-9d2e-6f1a2b3c4d5e',
            agentId: 'default',
            title: 't',
            createdAt: '2024-01-01T00:00:00Z',
            updatedAt: '2024-01-01T00:00:00Z',
          },
          messages: [{ seq: 1, turn: 1, role: 'robot', content: 'hi' }],
        },
      ],
    },
    {
      method: 'POST',
      path: '/v1/chat',
      bodies: [
        { message: 'What does Alice drink?', topK: 2 },
        { message: '' },
        { message: 'hi', conversationId: 'not-a-uuid' },
        { message: 'hi', stream: 'yes' },
        { message: 'hi', topK: 0 },
        { message: 'hi', unknown: 1 },
      ],
    },
  ];

  it.each(cases)('$method $path: the document accepts what the route accepts', async ({ method, path, docPath, bodies }) => {
    await clearMemories(ctx);
    const validate = validator.requestBody(method, docPath ?? path);
    for (const body of bodies) {
      const reply = await call(app, method, path, body);
      const documentSays = validate(body);
      expect({ body, accepted: reply.status !== 400 }, JSON.stringify(reply.body)).toEqual({ body, accepted: documentSays });
    }
  });

  it('query parameters: limit within the documented range', async () => {
    const validate = validator.parameter('GET', '/v1/memories', 'limit');
    for (const limit of ['0', '1', '200', '201']) {
      const reply = await call(app, 'GET', `/v1/memories?limit=${limit}`);
      expect({ limit, accepted: reply.status !== 400 }).toEqual({ limit, accepted: validate(Number(limit)) });
    }
  });

  it('path parameters: a document id must be a UUID', async () => {
    const validate = validator.parameter('GET', '/v1/documents/{id}', 'id');
    for (const id of ['not-a-uuid', '8c4f7a43-3b7e-4c58-9d2e-6f1a2b3c4d5e']) {
      const reply = await call(app, 'GET', `/v1/documents/${id}`);
      expect({ id, accepted: reply.status !== 400 }).toEqual({ id, accepted: validate(id) });
    }
  });
});

describe('GET /', () => {
  it('sends a browser to the console, not to a JSON 404', async () => {
    const res = await app.request('/', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(302);
    const target = new URL(res.headers.get('location')!, 'http://localhost/');
    expect(target.pathname).toBe('/console');
    // Behind a proxy serving the API under a prefix, the page is found under it too.
    expect(new URL(res.headers.get('location')!, 'https://example.com/memrag/').pathname).toBe('/memrag/console');
    expect((await app.request(target.pathname)).status).toBe(200);
  });
});

describe('GET /docs', () => {
  it('answers an HTML page that loads Swagger UI from this server', async () => {
    const res = await app.request('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toContain('docs/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\//);
    // Its own CSP, not the API's `default-src 'none'`, and still no other origin.
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:/);
  });

  it("serves the page's scripts and style sheet, and refuses other names", async () => {
    const bundle = await app.request('/docs/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toContain('text/javascript');
    expect((await bundle.text()).length).toBeGreaterThan(100_000);

    const init = await app.request('/docs/swagger-init.js');
    expect(await init.text()).toContain("url: 'openapi.json'");
    expect((await app.request('/docs/swagger-ui.css')).headers.get('content-type')).toContain('text/css');

    const other = await call(app, 'GET', '/docs/..%2Fpackage.json');
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe('validation_error');
  });

  it("leaves the API's CSP on every other reply", async () => {
    const res = await app.request('/healthz');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('content-security-policy')).not.toContain("script-src 'self'");
  });
});
