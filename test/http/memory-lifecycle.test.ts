import { sql } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { call, memoryAppFixture } from './http-test-context.js';

const http = memoryAppFixture();

describe('user scopes', () => {
  it('saves per user, reads by user, and lists or searches one user with or without the shared memories', async () => {
    const a = await call(http.app, 'POST', '/v1/memories', { key: 'snack', content: 'Ann snacks on almonds', userId: 'ann' });
    expect(a.status).toBe(201);
    expect(a.headers.get('location')).toBe('/v1/memories/snack?agentId=default&userId=ann');
    expect(a.body.memory).toMatchObject({ userId: 'ann', validTo: null, expiresAt: null });
    await call(http.app, 'PUT', '/v1/memories/snack?userId=bo', { content: 'Bo snacks on crisps' });
    await call(http.app, 'POST', '/v1/memories', { key: 'pantry', content: 'The pantry has almonds and crisps' });

    expect((await call(http.app, 'GET', '/v1/memories/snack?userId=ann')).body.memory.content).toBe('Ann snacks on almonds');
    expect((await call(http.app, 'GET', '/v1/memories/snack')).status).toBe(404);
    const listed = await call(http.app, 'GET', '/v1/memories?userId=bo');
    expect(listed.body.items.map((m: { key: string }) => m.key)).toEqual(['snack']);
    const withShared = await call(http.app, 'POST', '/v1/memories/search', {
      query: 'almonds crisps snacks',
      userId: 'ann',
      includeShared: true,
      mode: 'text',
    });
    expect(withShared.body.hits.map((h: { memory: { key: string; userId: string | null } }) => `${h.memory.userId}:${h.memory.key}`).sort()).toEqual([
      'ann:snack',
      'null:pantry',
    ]);
    const refused = await call(http.app, 'POST', '/v1/memories/search?userId=ann', { query: 'x', userId: 'bo' });
    expect(refused).toMatchObject({ status: 400, body: { error: { details: [{ path: 'userId' }] } } });
  });
});

describe('PATCH /v1/memories/:key', () => {
  it('changes only the given fields, edits tags, sets and clears the expiry', async () => {
    await call(http.app, 'POST', '/v1/memories', { key: 'p', content: 'Patchable', tags: ['a', 'b'], metadata: { n: 1 } });
    const patched = await call(http.app, 'PATCH', '/v1/memories/p', { addTags: ['c'], removeTags: ['a'], ttlSeconds: 600 });
    expect(patched.status).toBe(200);
    expect(patched.body.memory).toMatchObject({ content: 'Patchable', tags: ['b', 'c'], metadata: { n: 1 } });
    expect(Date.parse(patched.body.memory.expiresAt)).toBeGreaterThan(Date.now() + 500_000);
    const cleared = await call(http.app, 'PATCH', '/v1/memories/p', { expiresAt: null, content: 'Patched' });
    expect(cleared.body.memory).toMatchObject({ content: 'Patched', expiresAt: null, tags: ['b', 'c'] });
  });

  it('refuses an empty patch, tags with addTags, and a missing key', async () => {
    await call(http.app, 'POST', '/v1/memories', { key: 'p', content: 'Patchable' });
    expect((await call(http.app, 'PATCH', '/v1/memories/p', {})).status).toBe(400);
    const both = await call(http.app, 'PATCH', '/v1/memories/p', { tags: ['x'], addTags: ['y'] });
    expect(both).toMatchObject({ status: 400, body: { error: { details: [{ path: 'tags' }] } } });
    expect((await call(http.app, 'PATCH', '/v1/memories/p', { colour: 'red' })).body.error.details[0].path).toBe('colour');
    expect((await call(http.app, 'PATCH', '/v1/memories/nope', { content: 'x' })).status).toBe(404);
  });
});

describe('POST /v1/memories/batch', () => {
  it('saves every item in one transaction, or none when one is invalid, naming its index', async () => {
    const ok = await call(http.app, 'POST', '/v1/memories/batch?userId=cy', {
      memories: [
        { key: 'b1', content: 'One' },
        { content: 'Two', tags: ['t'] },
        { key: 'b3', content: 'Three', userId: 'cy' },
      ],
    });
    expect(ok.status).toBe(200);
    expect(ok.body.results).toHaveLength(3);
    expect(ok.body.results.every((r: { created: boolean; memory: { userId: string } }) => r.created && r.memory.userId === 'cy')).toBe(true);

    const bad = await call(http.app, 'POST', '/v1/memories/batch', {
      memories: [
        { key: 'b4', content: 'Fine' },
        { key: 'b5', content: '' },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path)).toContain('memories.1.content');
    expect((await call(http.app, 'GET', '/v1/memories/b4')).status).toBe(404);
    const repeated = await call(http.app, 'POST', '/v1/memories/batch', {
      memories: [
        { key: 'r', content: 'A' },
        { key: 'r', content: 'B' },
      ],
    });
    expect(repeated).toMatchObject({ status: 400, body: { error: { details: [{ path: 'memories.1.key' }] } } });
    const tooMany = await call(http.app, 'POST', '/v1/memories/batch', { memories: Array.from({ length: 101 }, (_, i) => ({ content: `m${i}` })) });
    expect(tooMany).toMatchObject({ status: 400, body: { error: { details: [{ path: 'memories' }] } } });
  });
});

describe('expiry and history', () => {
  it('shows expiresAt, hides an expired memory at once, and refuses an expiry in the past', async () => {
    const saved = await call(http.app, 'POST', '/v1/memories', { key: 'e', content: 'Expiring note', ttlSeconds: 60 });
    expect(Date.parse(saved.body.memory.expiresAt)).toBeGreaterThan(Date.now());
    await http.ctx.database.db.execute(sql`UPDATE memories SET expires_at = now() - interval '1 second' WHERE key = 'e'`);
    expect((await call(http.app, 'GET', '/v1/memories/e')).status).toBe(404);
    expect((await call(http.app, 'GET', '/v1/memories')).body.items).toEqual([]);
    const past = await call(http.app, 'POST', '/v1/memories', { content: 'x', expiresAt: '2001-01-01T00:00:00Z' });
    expect(past).toMatchObject({ status: 400, body: { error: { details: [{ path: 'expiresAt' }] } } });
    const both = await call(http.app, 'POST', '/v1/memories', { content: 'x', expiresAt: '2999-01-01T00:00:00Z', ttlSeconds: 5 });
    expect(both.status).toBe(400);
  });

  it('GET /v1/memories/:key/history lists the changes oldest first, also after a delete', async () => {
    await call(http.app, 'POST', '/v1/memories', { key: 'h', content: 'First', tags: ['x'], userId: 'dee' });
    await call(http.app, 'PATCH', '/v1/memories/h?userId=dee', { content: 'Second' });
    await call(http.app, 'DELETE', '/v1/memories/h?userId=dee');
    const history = await call(http.app, 'GET', '/v1/memories/h/history?userId=dee');
    expect(history.status).toBe(200);
    expect(
      history.body.events.map((e: { event: string; content: string | null; previousContent: string | null }) => [e.event, e.content, e.previousContent]),
    ).toEqual([
      ['created', 'First', null],
      ['updated', 'Second', 'First'],
      ['deleted', null, 'Second'],
    ]);
    expect(history.body.events[0]).toMatchObject({ tags: ['x'], actor: { type: 'api' } });
    expect(Date.parse(history.body.events[0].at)).not.toBeNaN();
    expect((await call(http.app, 'GET', '/v1/memories/h/history')).status).toBe(404);
  });
});

describe('metadata filters', () => {
  beforeEach(async () => {
    await call(http.app, 'POST', '/v1/memories/batch', {
      memories: [
        { key: 'm1', content: 'Apollo launch checklist', metadata: { project: 'apollo', priority: 3 } },
        { key: 'm2', content: 'Apollo budget review', metadata: { project: 'apollo', priority: 1 } },
        { key: 'm3', content: 'Gemini launch checklist', metadata: { project: 'gemini', priority: 5 } },
        { key: 'm4', content: 'Loose launch note' },
      ],
    });
  });
  const keys = (items: { key?: string; memory?: { key: string } }[]) => items.map((i) => i.key ?? i.memory!.key).sort();

  it('filters listings by a JSON query parameter and searches by a body field, in SQL', async () => {
    const listed = await call(http.app, 'GET', `/v1/memories?metadata=${encodeURIComponent(JSON.stringify({ project: 'apollo', priority: { $gte: 2 } }))}`);
    expect(listed.status).toBe(200);
    expect(keys(listed.body.items)).toEqual(['m1']);
    const searched = await call(http.app, 'POST', '/v1/memories/search', {
      query: 'launch checklist',
      metadata: { $or: [{ project: 'gemini' }, { priority: { $lt: 2 } }] },
    });
    expect(keys(searched.body.hits)).toEqual(['m2', 'm3']);
    const missing = await call(http.app, 'POST', '/v1/memories/search', { query: 'launch', mode: 'text', metadata: { project: { $exists: false } } });
    expect(keys(missing.body.hits)).toEqual(['m4']);
  });

  it('answers 400 naming the path of an unknown operator or a wrong type', async () => {
    const unknown = await call(http.app, 'POST', '/v1/memories/search', { query: 'x', metadata: { priority: { $near: 2 } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0].path).toMatch(/^metadata\.priority/);
    const wrongType = await call(http.app, 'POST', '/v1/memories/search', { query: 'x', metadata: { priority: { $gt: true } } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.details[0].path).toMatch(/^metadata\.priority/);
    const notJson = await call(http.app, 'GET', '/v1/memories?metadata=%7Bnope');
    expect(notJson).toMatchObject({ status: 400, body: { error: { details: [{ path: 'metadata' }] } } });
  });
});
