import { beforeEach, describe, expect, it } from 'vitest';
import { call, memoryAppFixture } from './http-test-context.js';

const http = memoryAppFixture();

const keysOf = (items: { key: string }[]) => items.map((m) => m.key).sort();

describe('health', () => {
  it('GET /healthz answers ok', async () => {
    const res = await call(http.app, 'GET', '/healthz');
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
  });
});

describe('POST /v1/memories', () => {
  it('creates (201), then updates (200), re-embedding only changed content', async () => {
    const created = await call(http.app, 'POST', '/v1/memories', {
      key: 'tea',
      content: 'Alice prefers green tea',
      tags: ['Preferences', ' alice '],
      metadata: { source: 'chat', nested: { n: 1 } },
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/v1/memories/tea?agentId=default');
    expect(created.body).toMatchObject({
      created: true,
      reembedded: true,
      memory: {
        key: 'tea',
        content: 'Alice prefers green tea',
        tags: ['preferences', 'alice'],
        metadata: { source: 'chat', nested: { n: 1 } },
        agentId: 'default',
      },
    });
    expect(Date.parse(created.body.memory.createdAt)).not.toBeNaN();

    const retagged = await call(http.app, 'POST', '/v1/memories', { key: 'tea', content: 'Alice prefers green tea', tags: ['x'] });
    expect(retagged.status).toBe(200);
    expect(retagged.body).toMatchObject({ created: false, reembedded: false, memory: { tags: ['x'], metadata: {} } });

    const changed = await call(http.app, 'POST', '/v1/memories', { key: 'tea', content: 'Alice now drinks coffee' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ created: false, reembedded: true, memory: { content: 'Alice now drinks coffee' } });
  });

  it('generates a uuid key when none is given', async () => {
    const res = await call(http.app, 'POST', '/v1/memories', { content: 'no key here' });
    expect(res.status).toBe(201);
    expect(res.body.memory.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const got = await call(http.app, 'GET', `/v1/memories/${res.body.memory.key}`);
    expect(got.body.memory.content).toBe('no key here');
  });

  it('takes agentId from the body or the query string, and refuses two different ones', async () => {
    expect((await call(http.app, 'POST', '/v1/memories?agentId=bob', { key: 'k', content: 'from query' })).body.memory.agentId).toBe('bob');
    expect((await call(http.app, 'POST', '/v1/memories', { key: 'k', content: 'from body', agentId: 'carol' })).body.memory.agentId).toBe('carol');
    expect((await call(http.app, 'POST', '/v1/memories?agentId=dan', { key: 'k', content: 'both', agentId: 'dan' })).status).toBe(201);
    const clash = await call(http.app, 'POST', '/v1/memories?agentId=bob', { key: 'k', content: 'clash', agentId: 'carol' });
    expect(clash.status).toBe(400);
    expect(clash.body.error.details).toEqual([{ path: 'agentId', message: expect.any(String) }]);
  });

  it('keeps a __proto__ metadata key as data', async () => {
    const res = await call(http.app, 'POST', '/v1/memories', '{"key":"p","content":"proto","metadata":{"__proto__":{"x":1},"y":2}}');
    expect(res.status).toBe(201);
    const got = await call(http.app, 'GET', '/v1/memories/p');
    expect(Object.keys(got.body.memory.metadata).sort()).toEqual(['__proto__', 'y']);
  });
});

describe('GET, PUT, DELETE /v1/memories/:key', () => {
  it('PUT creates (201) then updates (200)', async () => {
    const first = await call(http.app, 'PUT', '/v1/memories/birthday', { content: 'Alice was born on 12 March', tags: ['alice', 'dates'] });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ created: true, memory: { key: 'birthday', tags: ['alice', 'dates'] } });
    const second = await call(http.app, 'PUT', '/v1/memories/birthday', { content: 'Alice was born on 13 March' });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ created: false, reembedded: true, memory: { content: 'Alice was born on 13 March', tags: [] } });
  });

  it('GET returns the memory, per agent', async () => {
    await call(http.app, 'PUT', '/v1/memories/k?agentId=bob', { content: 'bob only' });
    const got = await call(http.app, 'GET', '/v1/memories/k?agentId=bob');
    expect(got).toMatchObject({ status: 200, body: { memory: { key: 'k', agentId: 'bob', content: 'bob only' } } });
    const other = await call(http.app, 'GET', '/v1/memories/k');
    expect(other).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });

  it('round-trips keys that need percent-encoding', async () => {
    for (const key of ['a/b', 'with space', 'café ☕', '100%', 'search', '?#&']) {
      const path = `/v1/memories/${encodeURIComponent(key)}`;
      expect((await call(http.app, 'PUT', path, { content: `value of ${key}` })).status).toBe(201);
      const got = await call(http.app, 'GET', path);
      expect(got.body.memory).toMatchObject({ key, content: `value of ${key}` });
    }
  });

  it('DELETE answers 204, then 404', async () => {
    await call(http.app, 'PUT', '/v1/memories/gone', { content: 'short-lived' });
    const res = await http.app.request('/v1/memories/gone', { method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect((await call(http.app, 'DELETE', '/v1/memories/gone')).status).toBe(404);
    expect((await call(http.app, 'GET', '/v1/memories/gone')).status).toBe(404);
  });

  it('DELETE is per agent', async () => {
    await call(http.app, 'PUT', '/v1/memories/shared?agentId=a1', { content: 'one' });
    await call(http.app, 'PUT', '/v1/memories/shared?agentId=a2', { content: 'two' });
    expect((await call(http.app, 'DELETE', '/v1/memories/shared?agentId=a1')).status).toBe(204);
    expect((await call(http.app, 'GET', '/v1/memories/shared?agentId=a2')).body.memory.content).toBe('two');
  });
});

describe('tag filters through HTTP', () => {
  beforeEach(async () => {
    for (const [key, tags] of [
      ['a', ['red', 'blue']],
      ['b', ['Red']],
      ['c', ['blue', 'green']],
      ['d', []],
    ] as const) {
      await call(http.app, 'POST', '/v1/memories', { key, content: `memory ${key} about colours`, tags });
    }
    await call(http.app, 'POST', '/v1/memories', { key: 'other', content: 'memory of another agent', tags: ['red'], agentId: 'other' });
  });

  const listKeys = async (query: string) => {
    const res = await call(http.app, 'GET', `/v1/memories?${query}`);
    expect(res.status).toBe(200);
    return keysOf(res.body.items);
  };

  it('lists with tagsAny, tagsAll and tagsNone, comma-separated or repeated, case-folded', async () => {
    expect(await listKeys('')).toEqual(['a', 'b', 'c', 'd']);
    expect(await listKeys('tagsAny=red,green')).toEqual(['a', 'b', 'c']);
    expect(await listKeys('tagsAny=red&tagsAny=green')).toEqual(['a', 'b', 'c']);
    expect(await listKeys('tagsAny=RED')).toEqual(['a', 'b']);
    expect(await listKeys('tagsAll=red,blue')).toEqual(['a']);
    expect(await listKeys('tagsAll=red&tagsAll=blue')).toEqual(['a']);
    expect(await listKeys('tagsNone=red')).toEqual(['c', 'd']);
    expect(await listKeys('tagsAny=blue&tagsNone=green')).toEqual(['a']);
    expect(await listKeys('tagsAny=red&agentId=other')).toEqual(['other']);
    // Empty pieces are ignored, not a filter on the empty tag.
    expect(await listKeys('tagsAny=&tagsAll=,')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('searches with the same filters', async () => {
    const search = async (body: object) => {
      const res = await call(http.app, 'POST', '/v1/memories/search', { query: 'memory about colours', ...body });
      expect(res.status).toBe(200);
      return keysOf(res.body.hits.map((h: { memory: { key: string } }) => h.memory));
    };
    expect(await search({})).toEqual(['a', 'b', 'c', 'd']);
    expect(await search({ tagsAny: ['red', 'green'] })).toEqual(['a', 'b', 'c']);
    expect(await search({ tagsAll: ['RED', 'blue'] })).toEqual(['a']);
    expect(await search({ tagsNone: ['red'] })).toEqual(['c', 'd']);
    expect(await search({ tagsAny: ['red'], agentId: 'other' })).toEqual(['other']);
  });

  it('counts tags under filters', async () => {
    const all = await call(http.app, 'GET', '/v1/tags');
    expect(all.status).toBe(200);
    expect(all.body.tags).toEqual([
      { tag: 'blue', count: 2 },
      { tag: 'red', count: 2 },
      { tag: 'green', count: 1 },
    ]);
    const filtered = await call(http.app, 'GET', '/v1/tags?tagsAny=green');
    expect(filtered.body.tags).toEqual([
      { tag: 'blue', count: 1 },
      { tag: 'green', count: 1 },
    ]);
    expect((await call(http.app, 'GET', '/v1/tags?agentId=other')).body.tags).toEqual([{ tag: 'red', count: 1 }]);
    expect((await call(http.app, 'GET', '/v1/tags?agentId=nobody')).body.tags).toEqual([]);
  });

  it('deletes by tags from a body', async () => {
    const res = await call(http.app, 'DELETE', '/v1/memories', { tagsAll: ['red', 'blue'] });
    expect(res).toMatchObject({ status: 200, body: { deleted: 1 } });
    expect(await listKeys('')).toEqual(['b', 'c', 'd']);
  });

  it('deletes by tags from the query string, within one agent', async () => {
    const res = await call(http.app, 'DELETE', '/v1/memories?tagsAny=red');
    expect(res).toMatchObject({ status: 200, body: { deleted: 2 } });
    expect(await listKeys('')).toEqual(['c', 'd']);
    expect(await listKeys('agentId=other')).toEqual(['other']);
  });

  it('deletes with tagsNone as an exception to tagsAny', async () => {
    const res = await call(http.app, 'DELETE', '/v1/memories', { tagsAny: ['blue'], tagsNone: ['green'] });
    expect(res.body).toEqual({ deleted: 1 });
    expect(await listKeys('')).toEqual(['b', 'c', 'd']);
  });
});

describe('POST /v1/memories/search', () => {
  beforeEach(async () => {
    await call(http.app, 'POST', '/v1/memories', { key: 'tea', content: 'Alice prefers green tea in the afternoon' });
    await call(http.app, 'POST', '/v1/memories', { key: 'car', content: 'Bob drives a red car' });
    await call(http.app, 'POST', '/v1/memories', { key: 'dog', content: 'Carol walks her dog every morning' });
  });

  it('ranks by similarity, best first, with scores', async () => {
    const res = await call(http.app, 'POST', '/v1/memories/search', { query: 'green tea afternoon' });
    expect(res.status).toBe(200);
    expect(res.body.hits).toHaveLength(3);
    expect(res.body.hits[0].memory.key).toBe('tea');
    const scores = res.body.hits.map((h: { score: number }) => h.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const s of scores) expect(s).toBeGreaterThanOrEqual(-1.000001);
  });

  it('honours topK and minScore', async () => {
    const top = await call(http.app, 'POST', '/v1/memories/search', { query: 'green tea afternoon', topK: 1 });
    expect(top.body.hits.map((h: { memory: { key: string } }) => h.memory.key)).toEqual(['tea']);
    const exact = await call(http.app, 'POST', '/v1/memories/search', { query: 'Bob drives a red car', minScore: 0.999 });
    expect(exact.body.hits.map((h: { memory: { key: string } }) => h.memory.key)).toEqual(['car']);
    const none = await call(http.app, 'POST', '/v1/memories/search', { query: 'Bob drives a red car', minScore: 1, agentId: 'nobody' });
    expect(none.body).toEqual({ hits: [], timeWindow: null });
  });

  it('leaves out memories created after asOf, and reads the time the query names against it', async () => {
    const saved = await call(http.app, 'GET', '/v1/memories/tea');
    const createdAt = new Date(saved.body.memory.createdAt as string);
    const search = (body: object) => call(http.app, 'POST', '/v1/memories/search', { query: 'green tea afternoon', ...body });
    const before = await search({ asOf: new Date(createdAt.getTime() - 60_000).toISOString() });
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ hits: [], timeWindow: null });
    const after = await search({ asOf: new Date(Date.now() + 60_000).toISOString() });
    expect(after.body.hits[0].memory.key).toBe('tea');
    const named = await search({ query: 'what tea did Alice like last week?' });
    expect(named.body.timeWindow).toMatchObject({ text: 'last week' });
    expect(new Date(named.body.timeWindow.to).getTime()).toBeLessThanOrEqual(Date.now());
    expect((await search({ asOf: 'yesterday' })).body.error.details[0].path).toBe('asOf');
  });

  it('accepts topK up to MAX_TOP_K', async () => {
    const res = await call(http.app, 'POST', '/v1/memories/search', { query: 'anything', topK: http.ctx.config.MAX_TOP_K });
    expect(res.status).toBe(200);
    expect(res.body.hits).toHaveLength(3);
  });

  it("searches in hybrid (default), vector or text mode, with each side's rank", async () => {
    await call(http.app, 'POST', '/v1/memories', { key: 'locker', content: 'Locker 4471-B belongs to Quixley' });
    const search = (body: object) => call(http.app, 'POST', '/v1/memories/search', { query: 'Quixley', ...body });

    const text = await search({ mode: 'text' });
    expect(text.status).toBe(200);
    expect(text.body.hits).toHaveLength(1);
    expect(text.body.hits[0]).toMatchObject({ memory: { key: 'locker' }, ranks: { vector: null, text: 1 } });
    expect(text.body.hits[0].score).toBeGreaterThan(0);

    const hybrid = await search({});
    expect(hybrid.status).toBe(200);
    expect(hybrid.body.hits).toHaveLength(4);
    expect(hybrid.body.hits[0]).toMatchObject({ memory: { key: 'locker' }, ranks: { text: 1 } });
    const byNumber = await search({ query: '4471', minScore: 0.99 });
    expect(byNumber.body.hits.map((h: { memory: { key: string } }) => h.memory.key)).toEqual(['locker']);
    expect(byNumber.body.hits[0].ranks).toEqual({ vector: null, text: 1 });

    const vector = await search({ mode: 'vector', query: 'Bob drives a red car', topK: 1 });
    expect(vector.body.hits).toEqual([expect.objectContaining({ memory: expect.objectContaining({ key: 'car' }), ranks: { vector: 1, text: null } })]);
    expect(vector.body.hits[0].score).toBeCloseTo(1, 5);

    const weighted = await search({ weights: { vector: 1, text: 0.000001, k: 10 } });
    expect(weighted.status).toBe(200);
  });

  it('rejects a bad mode, bad weights, and minScore in text mode, naming the field', async () => {
    const bad = async (body: object, path: string) => {
      const res = await call(http.app, 'POST', '/v1/memories/search', { query: 'tea', ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    };
    await bad({ mode: 'bm25' }, 'mode');
    await bad({ mode: 'text', minScore: 0.5 }, 'minScore');
    await bad({ weights: { vector: -1, text: 1 } }, 'weights.vector');
    await bad({ weights: { vector: 0, text: 0 } }, 'weights');
    await bad({ weights: { vector: 1, text: 1, bias: 2 } }, 'weights.bias');
    await bad({ weights: 'equal' }, 'weights');
  });
});

describe('pagination', () => {
  const walk = async (query: string) => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const qs: string = `${query}&limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await call(http.app, 'GET', `/v1/memories?${qs}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(5);
      seen.push(...res.body.items.map((m: { key: string }) => m.key));
      cursor = res.body.nextCursor;
      pages += 1;
      expect(pages).toBeLessThan(50);
    } while (cursor);
    return { seen, pages };
  };

  it('walks every item exactly once, newest first', async () => {
    const keys = Array.from({ length: 23 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    for (const [i, key] of keys.entries()) {
      await call(http.app, 'POST', '/v1/memories', { key, content: `memory number ${i}`, tags: i % 2 ? ['odd'] : ['even'] });
    }
    const all = await walk('agentId=default');
    expect(all.pages).toBe(5);
    expect(all.seen).toHaveLength(23);
    expect(new Set(all.seen).size).toBe(23);
    expect(all.seen).toEqual([...keys].reverse());

    const odd = await walk('tagsAny=odd');
    expect(odd.seen).toEqual(keys.filter((_, i) => i % 2).reverse());
    expect(odd.pages).toBe(3);
  });

  it('uses a default page size and answers nextCursor null on the last page', async () => {
    await call(http.app, 'POST', '/v1/memories', { key: 'only', content: 'just one' });
    const res = await call(http.app, 'GET', '/v1/memories');
    expect(res.body).toMatchObject({ items: [{ key: 'only' }], nextCursor: null });
  });
});
