import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { call, createApp, createTestContext } from './http-test-context.js';

let ctx: AppContext;
let app: Hono;

beforeAll(async () => {
  ctx = await createTestContext({
    LLM_MODEL: 'priced-model',
    LLM_PRICES: JSON.stringify({ 'priced-model': { inputPerMTok: 1, outputPerMTok: 2 }, 'other-priced': { inputPerMTok: 1, outputPerMTok: 2 } }),
    LLM_PROVIDERS: JSON.stringify({ local: { baseURL: 'http://127.0.0.1:11434/v1' } }),
  });
  app = createApp(ctx);
});
afterAll(async () => {
  await ctx?.close();
});
beforeEach(async () => {
  await ctx.database.db.execute(sql`DELETE FROM agent_versions`);
  await ctx.database.db.execute(sql`DELETE FROM agents`);
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 400's fields, as `details` names them. */
const fieldsOf = (res: { status: number; body: any }) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('validation_error');
  return res.body.error.details.map((d: { path: string }) => d.path);
};

describe('POST /v1/agents', () => {
  it('creates version 1 under the id given, with a Location', async () => {
    const res = await call(app, 'POST', '/v1/agents', {
      id: 'support',
      name: 'Support',
      instructions: 'Answer in French.',
      model: 'other-priced',
      provider: 'local',
      temperature: 0.3,
      budget: { maxUsd: 0.05, maxTokens: 10_000 },
      tools: { deny: ['delete_memory'] },
      approval: { tools: ['save_memory'] },
      recall: { memoryTopK: 3, reranker: 'lexical', tagsAny: ['faq'] },
      compaction: { contextWindow: 32_000 },
      memoryExtraction: false,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.headers.get('location')).toBe('/v1/agents/support');
    expect(res.body).toMatchObject({ id: 'support', version: 1, name: 'Support', provider: 'local', budget: { maxUsd: 0.05 }, memoryExtraction: false });
    expect(Date.parse(res.body.createdAt)).not.toBeNaN();
    expect((await call(app, 'GET', '/v1/agents/support')).body).toEqual(res.body);
  });

  it('generates a UUID id when none is given', async () => {
    const res = await call(app, 'POST', '/v1/agents', { name: 'Anonymous' });
    expect(res.status).toBe(201);
    expect(res.body.id).toMatch(UUID);
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'id', 'name', 'updatedAt', 'version']);
  });

  it('answers 409 agent_exists for an id that is taken', async () => {
    expect((await call(app, 'POST', '/v1/agents', { id: 'dup', name: 'First' })).status).toBe(201);
    const res = await call(app, 'POST', '/v1/agents', { id: 'dup', name: 'Second' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('agent_exists');
    expect((await call(app, 'GET', '/v1/agents/dup')).body.name).toBe('First');
  });

  it.each([
    ['an unknown setting', { name: 'A', temprature: 1 }, 'temprature'],
    ['an unknown nested setting', { name: 'A', budget: { maxEuro: 1 } }, 'budget.maxEuro'],
    ['a tool that does not exist', { name: 'A', tools: { allow: ['rm_rf'] } }, 'tools.allow.0'],
    ['an approval of a tool that does not exist', { name: 'A', approval: { tools: ['shell'] } }, 'approval.tools.0'],
    ['no name', { instructions: 'x' }, 'name'],
    ['a blank name', { name: '   ' }, 'name'],
    ['a bad id', { id: 'no spaces', name: 'A' }, 'id'],
    ['a temperature out of range', { name: 'A', temperature: 3 }, 'temperature'],
    ['a NUL in the instructions', { name: 'A', instructions: 'a\u0000b' }, 'instructions'],
    ['a provider the server does not have', { name: 'A', provider: 'elsewhere' }, 'provider'],
    ['a dollar budget for a model without a price', { name: 'A', model: 'free-model', budget: { maxUsd: 1 } }, 'budget.maxUsd'],
  ])('refuses %s with a 400 naming the field', async (_what, body, field) => {
    const res = await call(app, 'POST', '/v1/agents', body);
    expect(fieldsOf(res)).toContain(field);
    expect(res.body.error.message).toContain(field);
    expect((await call(app, 'GET', '/v1/agents')).body.items).toEqual([]);
  });

  it('prices a dollar budget by LLM_MODEL when the agent names no model', async () => {
    expect((await call(app, 'POST', '/v1/agents', { name: 'A', budget: { maxUsd: 1 } })).status).toBe(201);
  });

  it('refuses a body that is not JSON', async () => {
    const res = await call(app, 'POST', '/v1/agents', '{"name":');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_json');
  });
});

describe('GET /v1/agents', () => {
  it('lists newest first, a page at a time', async () => {
    for (const id of ['a', 'b', 'c']) expect((await call(app, 'POST', '/v1/agents', { id, name: id })).status).toBe(201);
    const first = await call(app, 'GET', '/v1/agents?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.items.map((a: { id: string }) => a.id)).toEqual(['c', 'b']);
    const second = await call(app, 'GET', `/v1/agents?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ items: [{ id: 'a' }], nextCursor: null });
    expect(fieldsOf(await call(app, 'GET', '/v1/agents?cursor=nonsense'))).toEqual(['cursor']);
    expect(fieldsOf(await call(app, 'GET', '/v1/agents?limit=0'))).toEqual(['limit']);
  });
});

describe('PATCH /v1/agents/:id', () => {
  it('changes the fields given, makes a new version only for a change, and clears fields given as null', async () => {
    await call(app, 'POST', '/v1/agents', { id: 'bot', name: 'Bot', model: 'other-priced', budget: { maxUsd: 1 }, temperature: 0.5 });
    const changed = await call(app, 'PATCH', '/v1/agents/bot', { instructions: 'Be brief.' });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id: 'bot', version: 2, name: 'Bot', instructions: 'Be brief.', model: 'other-priced', temperature: 0.5 });

    const same = await call(app, 'PATCH', '/v1/agents/bot', { instructions: 'Be brief.', temperature: 0.5 });
    expect(same.body).toEqual(changed.body);

    const cleared = await call(app, 'PATCH', '/v1/agents/bot', { temperature: null, budget: null });
    expect(cleared.body.version).toBe(3);
    expect(cleared.body).not.toHaveProperty('temperature');
    expect(cleared.body).not.toHaveProperty('budget');
    expect(cleared.body.model).toBe('other-priced');
  });

  it('refuses what the settings do not allow, naming the field, and writes nothing', async () => {
    await call(app, 'POST', '/v1/agents', { id: 'strict', name: 'Strict', model: 'other-priced', budget: { maxUsd: 1 } });
    expect(fieldsOf(await call(app, 'PATCH', '/v1/agents/strict', { name: null }))).toEqual(['name']);
    expect(fieldsOf(await call(app, 'PATCH', '/v1/agents/strict', { nmae: 'x' }))).toEqual(['nmae']);
    expect(fieldsOf(await call(app, 'PATCH', '/v1/agents/strict', { tools: { deny: ['format_disk'] } }))).toEqual(['tools.deny.0']);
    expect(fieldsOf(await call(app, 'PATCH', '/v1/agents/strict', { provider: 'elsewhere' }))).toEqual(['provider']);
    // The existing budget needs a price for the new model.
    expect(fieldsOf(await call(app, 'PATCH', '/v1/agents/strict', { model: 'free-model' }))).toEqual(['budget.maxUsd']);
    // Back to LLM_MODEL, which has a price.
    expect((await call(app, 'PATCH', '/v1/agents/strict', { model: null })).body).toMatchObject({ version: 2, budget: { maxUsd: 1 } });
    expect((await call(app, 'GET', '/v1/agents/strict/versions')).body.items.map((v: { version: number }) => v.version)).toEqual([2, 1]);
  });

  it('answers 404 for an agent that does not exist', async () => {
    const res = await call(app, 'PATCH', '/v1/agents/nobody', { name: 'X' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('versions', () => {
  it('lists them newest first, paginated, and reads each one', async () => {
    await call(app, 'POST', '/v1/agents', { id: 'v', name: 'v1' });
    for (let i = 2; i <= 4; i++) expect((await call(app, 'PATCH', '/v1/agents/v', { name: `v${i}` })).body.version).toBe(i);
    const first = await call(app, 'GET', '/v1/agents/v/versions?limit=3');
    expect(first.status).toBe(200);
    expect(first.body.items.map((v: { version: number; settings: { name: string } }) => [v.version, v.settings.name])).toEqual([
      [4, 'v4'],
      [3, 'v3'],
      [2, 'v2'],
    ]);
    const rest = await call(app, 'GET', `/v1/agents/v/versions?limit=3&cursor=${first.body.nextCursor}`);
    expect(rest.body).toMatchObject({ items: [{ agentId: 'v', version: 1, settings: { name: 'v1' } }], nextCursor: null });

    const one = await call(app, 'GET', '/v1/agents/v/versions/2');
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ agentId: 'v', version: 2, settings: { name: 'v2' }, createdAt: expect.any(String) });
    expect((await call(app, 'GET', '/v1/agents/v/versions/9')).status).toBe(404);
    expect(fieldsOf(await call(app, 'GET', '/v1/agents/v/versions/0'))).toEqual(['version']);
    expect(fieldsOf(await call(app, 'GET', '/v1/agents/v/versions/two'))).toEqual(['version']);
    expect(fieldsOf(await call(app, 'GET', '/v1/agents/v/versions?cursor=nonsense'))).toEqual(['cursor']);
    expect((await call(app, 'GET', '/v1/agents/nobody/versions')).status).toBe(404);
    expect((await call(app, 'GET', '/v1/agents/nobody/versions/1')).status).toBe(404);
  });
});

describe('DELETE /v1/agents/:id', () => {
  it('deletes the agent and its versions (204), then answers 404', async () => {
    await call(app, 'POST', '/v1/agents', { id: 'gone', name: 'Gone' });
    await call(app, 'PATCH', '/v1/agents/gone', { name: 'Gone 2' });
    const res = await call(app, 'DELETE', '/v1/agents/gone');
    expect(res.status).toBe(204);
    expect(res.body).toBeNull();
    expect((await call(app, 'GET', '/v1/agents/gone')).status).toBe(404);
    expect((await call(app, 'GET', '/v1/agents/gone/versions/1')).status).toBe(404);
    expect((await call(app, 'DELETE', '/v1/agents/gone')).status).toBe(404);
    // The id can be used again, from version 1.
    expect((await call(app, 'POST', '/v1/agents', { id: 'gone', name: 'Back' })).body.version).toBe(1);
  });

  it('refuses an id that is not one', async () => {
    expect(fieldsOf(await call(app, 'DELETE', '/v1/agents/not%20an%20id'))).toEqual(['id']);
  });
});
