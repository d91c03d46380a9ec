import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type DeclaredOperation, declaredOperations } from './openapi/declared-operations.js';
import { call, createApp, createTestContext } from './http-test-context.js';
import { isOpenAiCompatiblePath } from '../../src/http/openai-compatible/openai-error.js';

/**
 * One rule for query strings: `/v1/search`, `/v1/chat` and `/v1/documents/:id` ignored unknown
 * query parameters while the memory and conversation routes refused them. Every route the app
 * declares now refuses a parameter it does not declare, with a 400 naming it, before its handler
 * runs (so before it reads a body, or writes anything).
 */
describe('unknown query parameters, on every declared route', () => {
  let ctx: AppContext;
  let app: Hono;
  let operations: DeclaredOperation[];

  beforeAll(async () => {
    ctx = await createTestContext();
    const created = createApp(ctx);
    app = created;
    operations = declaredOperations(created);
  });
  afterAll(() => ctx?.close());

  /** The route's path with a value in each parameter; the check comes before anything reads them. */
  const pathOf = (op: DeclaredOperation) =>
    op.path.replace(/:(\w+)/g, (_, name: string) => (name === 'asset' ? 'swagger-init.js' : name === 'version' ? '1' : 'x'));

  it('walks every route', () => {
    const paths = operations.map((op) => `${op.method.toUpperCase()} ${op.path}`);
    for (const route of ['POST /v1/search', 'POST /v1/chat', 'GET /v1/documents/:id', 'GET /v1/memories', 'GET /healthz']) expect(paths).toContain(route);
  });

  it.each(['bogus=1', 'bogus=', 'bogus', 'limit=5&bogus=1&other=2'])('?%s: a 400 naming each unknown parameter, on every route', async (query) => {
    const unknown = query
      .split('&')
      .map((pair) => pair.split('=')[0]!)
      .filter((name) => name !== 'limit');
    for (const op of operations) {
      const declared = new Set(Object.keys((op.query as { shape?: object } | undefined)?.shape ?? {}));
      const names = unknown.filter((name) => !declared.has(name));
      // `limit` is known where a route declares it, unknown elsewhere.
      if (query.startsWith('limit=') && !declared.has('limit')) names.unshift('limit');
      const what = `${op.method.toUpperCase()} ${op.path}?${query}`;
      const res = await call(app, op.method.toUpperCase(), `${pathOf(op)}?${query}`, op.body ? {} : undefined);
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.code, what).toBe('validation_error');
      // The OpenAI-compatible routes answer in OpenAI's shape, whose `param` names the first field.
      if (isOpenAiCompatiblePath(pathOf(op))) expect(res.body.error, what).toMatchObject({ type: 'invalid_request_error', param: names[0] });
      else expect(res.body.error.details, what).toEqual(names.map((name) => ({ path: name, message: 'unknown field' })));
      for (const name of names) expect(res.body.error.message, what).toContain(`${name}: unknown field`);
    }
  });

  it('a declared parameter passes the check (empty values count as absent, as before)', async () => {
    expect((await call(app, 'GET', '/v1/memories?limit=5&agentId=')).status).toBe(200);
    expect((await call(app, 'GET', '/v1/documents?tagsAny=a,b')).status).toBe(200);
    expect((await call(app, 'POST', '/v1/search', { query: 'tea' })).status).toBe(200);
  });

  it('nothing is written by a request refused for its query string', async () => {
    const res = await call(app, 'PUT', '/v1/memories/refused?agentld=typo', { content: 'not saved' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Invalid query: agentld: unknown field');
    expect((await call(app, 'GET', '/v1/memories/refused')).status).toBe(404);
  });
});
