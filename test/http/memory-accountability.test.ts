import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, call, memoryAppFixture } from './http-test-context.js';

const http = memoryAppFixture();

/** A moment strictly between the writes before and after it. */
async function moment(): Promise<string> {
  await sleep(5);
  const at = new Date().toISOString();
  await sleep(5);
  return at;
}

describe('memory sources over HTTP', () => {
  let llm: ScriptedLlmServer | undefined;
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
  });

  it("returns a memory's sources from get, list and search, and a chat citation of it carries them", async () => {
    await call(http.app, 'PUT', '/v1/memories/by-api', { content: 'The office opens at nine' });
    const got = await call(http.app, 'GET', '/v1/memories/by-api');
    expect(got.body.memory.sources).toEqual([{ actor: 'api', conversationId: null, turn: null, quote: null, at: expect.any(String) }]);

    const quote = { text: 'I always drink rooibos', start: 4, end: 26 };
    const [added] = await http.ctx.memories.forTenant('default').applyChanges(
      {},
      [{ op: 'add', content: 'The user drinks rooibos tea' }].map((c) => ({ ...c, op: 'add' as const, quote })),
      {
        type: 'extraction',
        conversationId: '0b5b8f47-6d0e-4d69-9a57-2f6f0e6a7c11',
        turn: 3,
      },
    );
    const listed = await call(http.app, 'GET', '/v1/memories');
    expect(listed.body.items.find((m: { key: string }) => m.key === added!.key).sources).toEqual([
      { actor: 'extraction', conversationId: '0b5b8f47-6d0e-4d69-9a57-2f6f0e6a7c11', turn: 3, quote, at: expect.any(String) },
    ]);
    const found = await call(http.app, 'POST', '/v1/memories/search', { query: 'rooibos', mode: 'text' });
    expect(found.body.hits[0].memory.sources[0].quote).toEqual(quote);

    const scripted = await appWithScriptedLlm(http.ctx, [reply.text('You drink rooibos [1].')]);
    llm = scripted.llm;
    const chat = await call(scripted.app, 'POST', '/v1/chat', { message: 'What tea do I drink? rooibos' });
    expect(chat.status).toBe(200);
    expect(chat.body.citations).toEqual([
      expect.objectContaining({
        kind: 'memory',
        key: added!.key,
        sources: [{ actor: 'extraction', conversationId: '0b5b8f47-6d0e-4d69-9a57-2f6f0e6a7c11', turn: 3, quote, at: expect.any(String) }],
      }),
    ]);
  });

  it('reads a memory as it was (asOf) and leaves out facts not valid at a moment (validAt)', async () => {
    const before = await moment();
    await call(http.app, 'PUT', '/v1/memories/home', { content: 'The user lives in Lisbon', tags: ['home'] });
    const between = await moment();
    await call(http.app, 'PUT', '/v1/memories/home', { content: 'The user lives in Porto', tags: ['home'] });

    expect((await call(http.app, 'GET', `/v1/memories/home?asOf=${before}`)).status).toBe(404);
    expect((await call(http.app, 'GET', `/v1/memories/home?asOf=${between}`)).body.memory.content).toBe('The user lives in Lisbon');
    expect((await call(http.app, 'GET', '/v1/memories/home')).body.memory.content).toBe('The user lives in Porto');
    const listed = await call(http.app, 'GET', `/v1/memories?asOf=${encodeURIComponent(between)}`);
    expect(listed.body.items.map((m: { content: string }) => m.content)).toEqual(['The user lives in Lisbon']);
    const searched = await call(http.app, 'POST', '/v1/memories/search', { query: 'Lisbon', mode: 'text', asOf: between });
    expect(searched.body.hits.map((h: { memory: { content: string } }) => h.memory.content)).toEqual(['The user lives in Lisbon']);
    expect((await call(http.app, 'POST', '/v1/memories/search', { query: 'Lisbon', mode: 'text' })).body.hits).toEqual([]);

    const saved = await call(http.app, 'PUT', '/v1/memories/job', {
      content: 'The user worked at Acme',
      validFrom: '2019-01-01T00:00:00Z',
      validUntil: '2022-06-30T00:00:00Z',
    });
    expect(saved.body.memory).toMatchObject({ validFrom: '2019-01-01T00:00:00.000Z', validUntil: '2022-06-30T00:00:00.000Z' });
    expect((await call(http.app, 'GET', '/v1/memories/job')).status).toBe(404);
    expect((await call(http.app, 'GET', '/v1/memories/job?validAt=2020-01-01T00:00:00Z')).status).toBe(200);
    const then = await call(http.app, 'POST', '/v1/memories/search', { query: 'Acme', mode: 'text', validAt: '2020-01-01T00:00:00Z' });
    expect(then.body.hits).toHaveLength(1);
    expect((await call(http.app, 'POST', '/v1/memories/search', { query: 'Acme', mode: 'text' })).body.hits).toHaveLength(0);
    const history = await call(http.app, 'GET', '/v1/memories/job/history');
    expect(history.body.events[0]).toMatchObject({
      validFrom: '2019-01-01T00:00:00.000Z',
      validUntil: '2022-06-30T00:00:00.000Z',
      sources: [{ actor: 'api' }],
    });
  });

  it('deletes the memories drawn only from a deleted conversation with cascade=memories, and marks them without', async () => {
    const started = await call(http.app, 'POST', '/v1/chat', { message: 'Hello there' });
    expect(started.status).toBe(200);
    const conversationId: string = started.body.conversationId;
    const memories = http.ctx.memories.forTenant('default');
    const actor = { type: 'tool' as const, conversationId, turn: 1 };
    await memories.save({ key: 'only-here', content: 'Said in this conversation only', actor });
    await memories.save({ key: 'also-elsewhere', content: 'Said here first', actor });
    await memories.save({ key: 'also-elsewhere', content: 'Said here first, and again elsewhere', actor: { type: 'api' } });

    expect((await call(http.app, 'DELETE', `/v1/conversations/${conversationId}?cascade=memories`)).status).toBe(204);
    expect((await call(http.app, 'GET', '/v1/memories/only-here')).status).toBe(404);
    const kept = await call(http.app, 'GET', '/v1/memories/also-elsewhere');
    expect(kept.body.memory.sources).toEqual([
      { actor: 'tool', conversationId, turn: 1, quote: null, at: expect.any(String), deleted: true },
      { actor: 'api', conversationId: null, turn: null, quote: null, at: expect.any(String) },
    ]);

    const second = await call(http.app, 'POST', '/v1/chat', { message: 'Hello again' });
    const other: string = second.body.conversationId;
    await memories.save({ key: 'stays', content: 'Kept without cascade', actor: { type: 'tool', conversationId: other, turn: 1 } });
    expect((await call(http.app, 'DELETE', `/v1/conversations/${other}`)).status).toBe(204);
    expect((await call(http.app, 'GET', '/v1/memories/stays')).body.memory.sources).toEqual([
      { actor: 'tool', conversationId: other, turn: 1, quote: null, at: expect.any(String), deleted: true },
    ]);
  });

  it('refuses times that are not timestamps, a validUntil before validFrom and an unknown cascade, naming the field', async () => {
    const field = async (method: string, path: string, body?: unknown) => {
      const res = await call(http.app, method, path, body);
      expect(res.status).toBe(400);
      return res.body.error.details[0].path as string;
    };
    expect(await field('GET', '/v1/memories/k?asOf=yesterday')).toBe('asOf');
    expect(await field('GET', '/v1/memories/k?validAt=2020-13-45')).toBe('validAt');
    expect(await field('GET', '/v1/memories?asOf=1700000000')).toBe('asOf');
    expect(await field('GET', '/v1/memories?validAt=soon')).toBe('validAt');
    expect(await field('POST', '/v1/memories/search', { query: 'x', asOf: 'then' })).toBe('asOf');
    expect(await field('POST', '/v1/memories/search', { query: 'x', validAt: 12 })).toBe('validAt');
    expect(await field('PUT', '/v1/memories/k', { content: 'x', validFrom: 'the nineties' })).toBe('validFrom');
    expect(await field('PUT', '/v1/memories/k', { content: 'x', validUntil: 'June' })).toBe('validUntil');
    expect(await field('PUT', '/v1/memories/k', { content: 'x', validFrom: '2022-01-01T00:00:00Z', validUntil: '2021-01-01T00:00:00Z' })).toBe('validUntil');
    expect(await field('PATCH', '/v1/memories/k', { validFrom: '2022-01-01T00:00:00Z', validUntil: '2022-01-01T00:00:00Z' })).toBe('validUntil');
    // One bound against the stored other: nothing is written.
    await call(http.app, 'PUT', '/v1/memories/since', { content: 'The user has kept bees', validFrom: '2024-06-01T00:00:00Z' });
    expect(await field('PATCH', '/v1/memories/since', { validUntil: '2024-01-01T00:00:00Z' })).toBe('validUntil');
    expect((await call(http.app, 'GET', '/v1/memories/since')).body.memory).toMatchObject({ validUntil: null });
    expect(await field('POST', '/v1/memories/batch', { memories: [{ content: 'x', validUntil: 'nope' }] })).toBe('memories.0.validUntil');
    expect(await field('DELETE', '/v1/conversations/0b5b8f47-6d0e-4d69-9a57-2f6f0e6a7c11?cascade=all')).toBe('cascade');
  });
});
