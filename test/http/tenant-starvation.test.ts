import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { reply, type ScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { appWithScriptedLlm, createTestContext } from './http-test-context.js';

/**
 * Two tenants with keys on a server of four slots (two a tenant), and a model that holds every
 * reply until the test lets them go: tenant A's chats hold their slots for as long as the test
 * needs. A short queue timeout refuses A's chats past its share (and a B waiting behind A) within
 * the test.
 */
function twoTenantsWithHeldReplies(answer: string) {
  const t = {} as { ctx: AppContext; app: Hono; llm: ScriptedLlmServer; letRepliesGo: () => void };
  const held = new Promise<void>((resolve) => (t.letRepliesGo = resolve));
  beforeAll(async () => {
    t.ctx = await createTestContext({
      API_KEYS: 'tenant-a:key-a,tenant-b:key-b',
      MAX_CONCURRENT_REQUESTS: '4',
      MAX_QUEUED_REQUESTS: '16',
      QUEUE_TIMEOUT_MS: '1000',
    });
    ({ app: t.app, llm: t.llm } = await appWithScriptedLlm(t.ctx, () => reply.text(answer, { holdUntil: held })));
  });
  afterAll(async () => {
    t.letRepliesGo();
    await t.llm?.close();
    await t.ctx?.close();
  });
  return t;
}

/**
 * One tenant's long chats (exempt from the request timeout) must not take every slot and leave
 * another tenant's read to wait out the queue timeout and answer 503.
 */
describe('one tenant saturating admission with long chats', () => {
  const t = twoTenantsWithHeldReplies('A considered answer.');

  const as = (key: string, path: string, body?: unknown) =>
    t.app.request(path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('exports memrag_admission_wait_seconds by tenant on /metrics after a request', async () => {
    expect((await as('key-b', '/v1/tags')).status).toBe(200);
    const metrics = await (await t.app.request('/metrics')).text();
    expect(metrics).toMatch(/^memrag_admission_wait_seconds_count\{tenant="tenant-b"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^memrag_admission_wait_seconds_bucket\{le="0\.001",tenant="tenant-b"\} \d+$/m);
  });

  it("answers tenant B's read while tenant A's chats hold A's share; A's chats past its share get 429 with Retry-After", async () => {
    const chats = Array.from({ length: 6 }, (_, i) => as('key-a', '/v1/chat', { message: `Question ${i} about tea?` }));
    // A's first chats reach the model and are held there.
    while (t.llm.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));

    const read = await as('key-b', '/v1/memories');
    expect(read.status).toBe(200);
    // B was answered while A still held its slots, and A never ran more than its share.
    expect(t.llm.requests.length).toBe(2);

    // The four past A's share waited for a turn that never came while the first two were held.
    const refusedLater = await Promise.all(chats.slice(2));
    for (const refused of refusedLater) {
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    }
    expect(t.llm.requests.length).toBe(2);

    // A memory whose key is "events" is a write like any other, not an event stream out of the gate.
    const eventsKey = await t.app.request('/v1/memories/events', {
      method: 'PUT',
      headers: { authorization: 'Bearer key-a', 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'Not an event stream' }),
    });
    expect(eventsKey.status).toBe(429);
    // At its share, A can still look at a run and cancel one: here, one that does not exist.
    expect((await as('key-a', '/v1/runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await as('key-a', '/v1/runs/00000000-0000-4000-8000-000000000000/cancel', {})).status).toBe(404);

    t.letRepliesGo();
    const answered = await Promise.all(chats.slice(0, 2));
    expect(answered.map((res) => res.status)).toEqual([200, 200]);
  });
});

/**
 * A streamed chat answers its headers at once and runs its turn after them: released at its
 * headers, its slot would let one tenant run any number of turns at once by asking for streams.
 */
describe('one tenant saturating admission with streamed chats', () => {
  const t = twoTenantsWithHeldReplies('A streamed answer.');

  const post = (key: string, path: string, body: unknown) =>
    t.app.request(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it("holds a streamed chat's slot until its stream ends: A's next chat waits, B's read is answered", async () => {
    const streams = await Promise.all([0, 1].map((i) => post('key-a', '/v1/chat', { message: `Streamed ${i} about tea?`, stream: true })));
    expect(streams.map((res) => res.headers.get('content-type'))).toEqual([
      expect.stringContaining('text/event-stream'),
      expect.stringContaining('text/event-stream'),
    ]);
    while (t.llm.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    // A client that hangs up leaves its turn running (to be reconnected to): the slot stays held.
    await streams[0]?.body?.cancel();

    const third = await post('key-a', '/v1/chat', { message: 'A third question about tea?' });
    expect(third.status).toBe(429);
    expect(t.llm.requests.length).toBe(2);
    const read = await t.app.request('/v1/memories', { headers: { authorization: 'Bearer key-b' } });
    expect(read.status).toBe(200);

    t.letRepliesGo();
    expect(await streams[1]?.text()).toContain('A streamed answer.');
    await t.ctx.backgroundTasks.whenIdle();
    // Both streams ended: A's share is free again.
    const after = await post('key-a', '/v1/chat', { message: 'And now, about tea?' });
    expect(after.status).toBe(200);
  });
});
