import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/retrieval/cursor.js';
import { createCapturedLogger } from '../support/captured-logger.js';
import { type JsonReply, call, createApp, memoryAppFixture } from './http-test-context.js';

const http = memoryAppFixture();

/** A 400 validation error whose details and message both name `path`. */
function expectInvalid(res: JsonReply, path: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('validation_error');
  expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  expect(res.body.error.message).toContain(path);
}

const post = (body: unknown) => call(http.app, 'POST', '/v1/memories', body);

describe('400 validation_error naming the field', () => {
  it('wrong types', async () => {
    expectInvalid(await post({ content: 42 }), 'content');
    expectInvalid(await post({ content: 'x', tags: 'a,b' }), 'tags');
    expectInvalid(await post({ content: 'x', tags: ['ok', 7] }), 'tags.1');
    expectInvalid(await post({ content: 'x', metadata: [] }), 'metadata');
    expectInvalid(await post({ content: 'x', metadata: null }), 'metadata');
    expectInvalid(await post({ content: 'x', metadata: 'text' }), 'metadata');
    expectInvalid(await post({ content: 'x', agentId: 5 }), 'agentId');
    expectInvalid(await post({ content: 'x', key: 5 }), 'key');
  });

  it('missing fields', async () => {
    expectInvalid(await post({ tags: ['a'] }), 'content');
    expectInvalid(await call(http.app, 'PUT', '/v1/memories/k', {}), 'content');
    expectInvalid(await call(http.app, 'POST', '/v1/memories/search', { topK: 3 }), 'query');
  });

  it('unknown fields, each named', async () => {
    const res = await post({ content: 'x', tag: ['a'], agentid: 'b' });
    expectInvalid(res, 'tag');
    expectInvalid(res, 'agentid');
    expect(res.body.error.details).toContainEqual({ path: 'tag', message: 'unknown field' });
    expectInvalid(await call(http.app, 'PUT', '/v1/memories/k', { key: 'k', content: 'x' }), 'key');
    expectInvalid(await call(http.app, 'POST', '/v1/memories/search', { query: 'x', top_k: 3 }), 'top_k');
    expectInvalid(await call(http.app, 'GET', '/v1/memories?tag=red'), 'tag');
    expectInvalid(await call(http.app, 'GET', '/v1/tags?agent=x'), 'agent');
    expectInvalid(await call(http.app, 'GET', '/v1/memories/k?agent=x'), 'agent');
  });

  it('a body that is not an object', async () => {
    const res = await post([{ content: 'x' }]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', details: [{ path: '' }] });
    expect(res.body.error.message).toContain('body');
  });

  it('limits of keys, content, tags, metadata and agent ids', async () => {
    expectInvalid(await post({ key: '', content: 'x' }), 'key');
    expectInvalid(await post({ key: 'k'.repeat(257), content: 'x' }), 'key');
    expectInvalid(await post({ key: 'line\nbreak', content: 'x' }), 'key');
    expectInvalid(await post({ content: '' }), 'content');
    expectInvalid(await post({ content: '   ' }), 'content');
    expectInvalid(await post({ content: 'x'.repeat(100_001) }), 'content');
    expect((await post({ content: 'x'.repeat(100_000) })).status).toBe(201);
    expectInvalid(await post({ content: 'x', tags: ['   '] }), 'tags.0');
    expectInvalid(await post({ content: 'x', tags: ['t'.repeat(65)] }), 'tags.0');
    expectInvalid(await post({ content: 'x', tags: Array.from({ length: 65 }, (_, i) => `t${i}`) }), 'tags');
    expect((await post({ content: 'x', tags: Array.from({ length: 64 }, (_, i) => `t${i}`) })).status).toBe(201);
    expectInvalid(await post({ content: 'x', metadata: { big: 'y'.repeat(64 * 1024) } }), 'metadata');
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const tooDeep = await post({ content: 'x', metadata: deep });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.error.details[0].path).toMatch(/^metadata(\.a)+$/);
    expectInvalid(await post({ content: 'x', agentId: '' }), 'agentId');
    expectInvalid(await post({ content: 'x', agentId: 'has space' }), 'agentId');
    expectInvalid(await post({ content: 'x', agentId: 'a'.repeat(129) }), 'agentId');
    expect((await post({ content: 'x', agentId: 'user@example.com:thread-1.v2_x' })).status).toBe(201);
    expectInvalid(await call(http.app, 'GET', '/v1/memories/k?agentId=bad%20id'), 'agentId');
  });

  it('NUL characters anywhere, never a 500', async () => {
    expectInvalid(await post({ content: 'a\u0000b' }), 'content');
    expectInvalid(await post({ key: 'a\u0000b', content: 'x' }), 'key');
    expectInvalid(await post({ content: 'x', tags: ['a\u0000'] }), 'tags.0');
    expectInvalid(await post({ content: 'x', agentId: 'a\u0000' }), 'agentId');
    expectInvalid(await post({ content: 'x', metadata: { note: 'a\u0000' } }), 'metadata.note');
    expectInvalid(await post({ content: 'x', metadata: { list: ['ok', { deep: '\u0000' }] } }), 'metadata.list.1.deep');
    expectInvalid(await post({ content: 'x', metadata: { 'k\u0000': 1 } }), 'metadata.k\u0000');
    expectInvalid(await call(http.app, 'PUT', '/v1/memories/a%00b', { content: 'x' }), 'key');
    expectInvalid(await call(http.app, 'GET', '/v1/memories/a%00b'), 'key');
    expectInvalid(await call(http.app, 'POST', '/v1/memories/search', { query: 'a\u0000' }), 'query');
    expectInvalid(await call(http.app, 'GET', '/v1/memories?tagsAny=a%00'), 'tagsAny.0');
    expectInvalid(await call(http.app, 'DELETE', '/v1/memories', { tagsAny: ['\u0000'] }), 'tagsAny.0');
  });

  it('unpaired surrogates, which jsonb rejects and text would silently mangle', async () => {
    expectInvalid(await post('{"content":"x","metadata":{"a":"\\ud800"}}'), 'metadata.a');
    expectInvalid(await post('{"content":"a\\udc00b"}'), 'content');
    expect((await post({ content: 'emoji 😀 pairs are fine', metadata: { e: '😀' } })).status).toBe(201);
  });

  it('bad cursors', async () => {
    expectInvalid(await call(http.app, 'GET', '/v1/memories?cursor=not-a-cursor'), 'cursor');
    const forged = encodeCursor({ createdAt: "2024-01-01'; DROP TABLE memories; --", id: 'x' });
    expectInvalid(await call(http.app, 'GET', `/v1/memories?cursor=${forged}`), 'cursor');
    expectInvalid(await call(http.app, 'GET', `/v1/memories?cursor=${'A'.repeat(600)}`), 'cursor');
  });

  it('limit out of range or not a number, or given twice', async () => {
    expectInvalid(await call(http.app, 'GET', '/v1/memories?limit=0'), 'limit');
    expectInvalid(await call(http.app, 'GET', '/v1/memories?limit=201'), 'limit');
    expectInvalid(await call(http.app, 'GET', '/v1/memories?limit=ten'), 'limit');
    expectInvalid(await call(http.app, 'GET', '/v1/memories?limit=1.5'), 'limit');
    expectInvalid(await call(http.app, 'GET', '/v1/memories?limit=1&limit=2'), 'limit');
    expect((await call(http.app, 'GET', '/v1/memories?limit=200')).status).toBe(200);
  });

  it('topK and minScore out of range', async () => {
    const search = (body: object) => call(http.app, 'POST', '/v1/memories/search', { query: 'tea', ...body });
    expectInvalid(await search({ topK: 0 }), 'topK');
    expectInvalid(await search({ topK: http.ctx.config.MAX_TOP_K + 1 }), 'topK');
    expectInvalid(await search({ topK: 2.5 }), 'topK');
    expectInvalid(await search({ topK: '5' }), 'topK');
    expectInvalid(await search({ minScore: 1.5 }), 'minScore');
    expectInvalid(await search({ minScore: -2 }), 'minScore');
    expectInvalid(await search({ query: '' }), 'query');
  });

  it('a bulk delete without tagsAny or tagsAll', async () => {
    expectInvalid(await call(http.app, 'DELETE', '/v1/memories'), 'tagsAny');
    expectInvalid(await call(http.app, 'DELETE', '/v1/memories', {}), 'tagsAny');
    expectInvalid(await call(http.app, 'DELETE', '/v1/memories', { tagsAny: [] }), 'tagsAny');
    expectInvalid(await call(http.app, 'DELETE', '/v1/memories', { tagsNone: ['x'] }), 'tagsAny');
    expectInvalid(await call(http.app, 'DELETE', '/v1/memories?agentId=a'), 'tagsAny');
    expectInvalid(await call(http.app, 'DELETE', '/v1/memories?tagsAny=,,'), 'tagsAny');
    const both = await call(http.app, 'DELETE', '/v1/memories?tagsAny=a', { tagsAny: ['b'] });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe('validation_error');
  });
});

describe('400 invalid_json', () => {
  it('malformed, empty or truncated bodies', async () => {
    for (const body of ['{"content": "x",}', '{content: "x"}', '{"content": "x"', 'content=x', '']) {
      const res = await call(http.app, 'POST', '/v1/memories', body);
      expect(res.status, body).toBe(400);
      expect(res.body.error.code, body).toBe('invalid_json');
      expect(res.body.error.details).toBeNull();
    }
    const put = await call(http.app, 'PUT', '/v1/memories/k', '[');
    expect(put.body.error.code).toBe('invalid_json');
    const del = await call(http.app, 'DELETE', '/v1/memories', '{"tagsAny":');
    expect(del.body.error.code).toBe('invalid_json');
  });

  it('accepts JSON sent with another content type (curl -d)', async () => {
    const res = await http.app.request('/v1/memories', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '{"content":"sent by curl -d"}',
    });
    expect(res.status).toBe(201);
  });
});

describe('404 not_found', () => {
  it('missing keys and unknown routes, as JSON', async () => {
    const missing = await call(http.app, 'GET', '/v1/memories/nope');
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'not_found', details: null } } });
    expect(missing.body.error.message).toContain('nope');
    expect((await call(http.app, 'DELETE', '/v1/memories/nope')).body.error.code).toBe('not_found');
    for (const [method, path] of [
      // Not `/`, which sends a browser to /console (docs.test.ts).
      ['GET', '/nowhere'],
      ['GET', '/v2/memories'],
      ['GET', '/v1/memories/a/b'],
      ['PATCH', '/v1/tags'],
      ['GET', '/v1/memories/'],
    ] as const) {
      const res = await call(http.app, method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body.error.code).toBe('not_found');
    }
  });
});

describe('413 payload_too_large', () => {
  it('rejects a body past MAX_BODY_BYTES, with or without a content-length', async () => {
    const small = createApp({ ...http.ctx, config: { ...http.ctx.config, MAX_BODY_BYTES: 256 } });
    const body = JSON.stringify({ key: 'big', content: 'x'.repeat(300) });
    // app.request() sends no content-length, so the limit is counted while reading.
    const streamed = await call(small, 'POST', '/v1/memories', body);
    expect(streamed.status).toBe(413);
    expect(streamed.body.error).toMatchObject({ code: 'payload_too_large', message: expect.stringContaining('256') });
    const declared = await small.request('/v1/memories', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      body,
    });
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    expect((await call(small, 'POST', '/v1/memories', { key: 'ok', content: 'fits' })).status).toBe(201);
    expect((await call(http.app, 'GET', '/v1/memories/big')).status).toBe(404);
  });
});

describe('500 internal_error', () => {
  it('answers JSON without the cause, and logs it', async () => {
    const { logger, lines } = createCapturedLogger('error');
    const failing = createApp({
      ...http.ctx,
      logger,
      memories: {
        forTenant: (tenantId) => ({
          ...http.ctx.memories.forTenant(tenantId),
          get: async () => {
            throw new Error('connection to 10.0.0.5 refused');
          },
        }),
      },
    });
    const res = await call(failing, 'GET', '/v1/memories/k');
    expect(res).toMatchObject({ status: 500, body: { error: { code: 'internal_error', details: null } } });
    expect(JSON.stringify(res.body)).not.toContain('10.0.0.5');
    const failures = lines.filter((l) => l.msg !== 'request');
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ level: 'error', msg: 'GET /v1/memories/k failed', err: { message: 'connection to 10.0.0.5 refused' } });
  });
});

describe('nothing half-written', () => {
  it('a rejected request leaves the store unchanged', async () => {
    const original = await call(http.app, 'PUT', '/v1/memories/keep', { content: 'the original', tags: ['orig'], metadata: { v: 1 } });
    expect(original.status).toBe(201);
    const small = createApp({ ...http.ctx, config: { ...http.ctx.config, MAX_BODY_BYTES: 128 } });

    const rejected = [
      await call(http.app, 'PUT', '/v1/memories/keep', { content: 'changed', tags: ['new'], metadata: { v: '\u0000' } }),
      await call(http.app, 'PUT', '/v1/memories/keep', '{"content":"changed","metadata":{"v":"\\ud800"}}'),
      await call(http.app, 'PUT', '/v1/memories/keep', { content: 'changed', tags: ['new'], extra: true }),
      await call(http.app, 'PUT', '/v1/memories/keep', { content: 'changed', tags: Array.from({ length: 65 }, (_, i) => `t${i}`) }),
      await call(http.app, 'PUT', '/v1/memories/keep?agentId=x', { content: 'changed', agentId: 'y' }),
      await call(http.app, 'POST', '/v1/memories', { key: 'fresh', content: 'new\u0000' }),
      await call(http.app, 'POST', '/v1/memories', { key: 'fresh', content: 'x', metadata: { big: 'y'.repeat(70_000) } }),
      await call(small, 'PUT', '/v1/memories/keep', { content: 'changed'.repeat(50) }),
      await call(http.app, 'DELETE', '/v1/memories', { tagsNone: ['orig'] }),
      await call(http.app, 'DELETE', '/v1/memories?tagsAny=orig&bogus=1'),
      await call(http.app, 'DELETE', '/v1/memories/keep?agentId=bad%20id'),
    ];
    for (const res of rejected) expect([400, 413], JSON.stringify(res.body)).toContain(res.status);

    const list = await call(http.app, 'GET', '/v1/memories');
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0]).toEqual(original.body.memory);
  });
});
