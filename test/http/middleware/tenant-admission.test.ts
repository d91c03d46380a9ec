import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { ApiEnv } from '../../../src/http/api-env.js';
import { concurrencyLimit } from '../../../src/http/middleware/concurrency-limit.js';
import { tenantAdmission } from '../../../src/http/middleware/tenant-admission.js';

interface Limits {
  server?: { maxInFlight: number; maxQueued: number };
  maxPerTenant: number;
  maxQueued: number;
  queueTimeoutMs: number;
}

/**
 * An app with the server's gate, a stand-in key check (the tenant is the `x-tenant` header) and
 * the tenant's gate, whose handler waits for the test to let each request through (or fail).
 */
function appWith(limits: Limits) {
  const started: string[] = [];
  const gates = new Map<string, { finish: () => void; fail: () => void }>();
  const app = new Hono<ApiEnv>();
  const { queueTimeoutMs } = limits;
  if (limits.server) app.use(concurrencyLimit({ ...limits.server, queueTimeoutMs }));
  app.use(async (c, next) => {
    c.set('tenantId', c.req.header('x-tenant') ?? 'default');
    await next();
  });
  app.use(tenantAdmission({ maxPerTenant: limits.maxPerTenant, maxQueued: limits.maxQueued, queueTimeoutMs }));
  app.get('/:name', async (c) => {
    const name = c.req.param('name');
    started.push(name);
    await new Promise<void>((resolve, reject) => gates.set(name, { finish: resolve, fail: () => reject(new Error(`${name} failed`)) }));
    return c.text(name);
  });
  app.onError((_err, c) => c.text('failed', 500));
  const send = (tenant: string, name: string, signal?: AbortSignal) =>
    app.request(new Request(`http://localhost/${name}`, { headers: { 'x-tenant': tenant }, ...(signal ? { signal } : {}) }));
  const finish = (name: string) => gates.get(name)!.finish();
  const fail = (name: string) => gates.get(name)!.fail();
  const tick = () => new Promise((r) => setTimeout(r, 10));
  return { send, started, finish, fail, tick };
}

const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

describe('tenantAdmission', () => {
  it("queues a tenant's request past its share and runs it once one of the tenant's requests answers, in arrival order", async () => {
    const { send, started, finish, tick } = appWith({ maxPerTenant: 2, maxQueued: 10, queueTimeoutMs: 5_000 });
    const a1 = send('a', 'a1');
    const a2 = send('a', 'a2');
    const a3 = send('a', 'a3');
    const a4 = send('a', 'a4');
    await tick();
    expect(started).toEqual(['a1', 'a2']);
    finish('a2');
    expect(await (await a2).text()).toBe('a2');
    await tick();
    expect(started).toEqual(['a1', 'a2', 'a3']);
    finish('a1');
    finish('a3');
    await tick();
    finish('a4');
    expect(await Promise.all([a1, a3, a4].map(async (r) => (await r).text()))).toEqual(['a1', 'a3', 'a4']);
  });

  it('serves another tenant while one waits past its share, without the waiting one holding a server slot', async () => {
    // Three server slots: tenant a holds two, and its third request waits for a's share, not for the server.
    const { send, started, finish, tick } = appWith({ server: { maxInFlight: 3, maxQueued: 10 }, maxPerTenant: 2, maxQueued: 10, queueTimeoutMs: 5_000 });
    const held = [send('a', 'a1'), send('a', 'a2'), send('a', 'a3')];
    await tick();
    expect(started).toEqual(['a1', 'a2']);
    const b1 = send('b', 'b1');
    const b2 = send('b', 'b2');
    await tick();
    // b1 took the slot a3 gave back; b2 waits for a server slot.
    expect(started).toEqual(['a1', 'a2', 'b1']);
    finish('b1');
    expect((await b1).status).toBe(200);
    await tick();
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2']);
    finish('b2');
    expect((await b2).status).toBe(200);
    // a3 gets its turn once a1 answers (the server slot a1 frees passes on with it).
    finish('a1');
    await tick();
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2', 'a3']);
    finish('a2');
    finish('a3');
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it("answers 429 rate_limited with Retry-After at once when the tenant's queue is full", async () => {
    const { send, started, finish, tick } = appWith({ maxPerTenant: 1, maxQueued: 1, queueTimeoutMs: 3_000 });
    const a1 = send('a', 'a1');
    const a2 = send('a', 'a2');
    await tick();
    const a3 = await send('a', 'a3');
    expect(a3.status).toBe(429);
    expect(a3.headers.get('retry-after')).toBe('3');
    expect(await codeOf(a3)).toBe('rate_limited');
    // Another tenant is not refused.
    const b1 = send('b', 'b1');
    await tick();
    finish('b1');
    expect((await b1).status).toBe(200);
    finish('a1');
    await a1;
    await tick();
    finish('a2');
    expect((await a2).status).toBe(200);
    expect(started).toEqual(['a1', 'b1', 'a2']);
  });

  it('answers 429 to a request that waited past the queue timeout, which never runs; the share is whole again after', async () => {
    const { send, started, finish, tick } = appWith({ maxPerTenant: 1, maxQueued: 10, queueTimeoutMs: 50 });
    const a1 = send('a', 'a1');
    await tick();
    const a2 = await send('a', 'a2');
    expect(a2.status).toBe(429);
    expect(a2.headers.get('retry-after')).toBe('1');
    expect(await codeOf(a2)).toBe('rate_limited');
    finish('a1');
    await a1;
    const a3 = send('a', 'a3');
    await tick();
    finish('a3');
    expect((await a3).status).toBe(200);
    expect(started).toEqual(['a1', 'a3']);
  });

  it('drops a waiting request whose client hung up, without running it', async () => {
    const { send, started, finish, tick } = appWith({ maxPerTenant: 1, maxQueued: 10, queueTimeoutMs: 5_000 });
    const a1 = send('a', 'a1');
    await tick();
    const controller = new AbortController();
    const a2 = send('a', 'a2', controller.signal);
    const a3 = send('a', 'a3');
    await tick();
    controller.abort();
    await a2;
    finish('a1');
    await a1;
    await tick();
    expect(started).toEqual(['a1', 'a3']);
    finish('a3');
    expect((await a3).status).toBe(200);
  });

  it("gives the tenant's slot back when its request fails", async () => {
    const { send, started, fail, finish, tick } = appWith({ server: { maxInFlight: 4, maxQueued: 10 }, maxPerTenant: 1, maxQueued: 10, queueTimeoutMs: 5_000 });
    const a1 = send('a', 'a1');
    const a2 = send('a', 'a2');
    await tick();
    fail('a1');
    expect((await a1).status).toBe(500);
    await tick();
    expect(started).toEqual(['a1', 'a2']);
    finish('a2');
    expect((await a2).status).toBe(200);
  });

  it('runs a request its tenant admitted ahead of those that came later for a server slot', async () => {
    const { send, started, finish, tick } = appWith({ server: { maxInFlight: 2, maxQueued: 10 }, maxPerTenant: 1, maxQueued: 10, queueTimeoutMs: 5_000 });
    const a1 = send('a', 'a1');
    await tick();
    // a2 waits for a's share, its server slot given back: b1 takes it, and c1 waits for the server.
    const a2 = send('a', 'a2');
    await tick();
    const b1 = send('b', 'b1');
    await tick();
    const c1 = send('c', 'c1');
    await tick();
    expect(started).toEqual(['a1', 'b1']);
    finish('a1');
    await a1;
    await tick();
    expect(started).toEqual(['a1', 'b1', 'a2']);
    finish('b1');
    await b1;
    await tick();
    expect(started).toEqual(['a1', 'b1', 'a2', 'c1']);
    finish('a2');
    finish('c1');
    expect((await Promise.all([a2, c1])).map((r) => r.status)).toEqual([200, 200]);
  });

  it("leaves a reply's body alone unless it is an event stream, whose end it waits for", async () => {
    // @hono/node-server writes a reply it made itself straight from the string it holds; reading
    // its body turns it into a web stream first.
    const bodiesRead: string[] = [];
    const readBody = Object.getOwnPropertyDescriptor(Response.prototype, 'body')!.get!;
    const watched = (body: string | ReadableStream<Uint8Array>, type: string) => {
      const res = new Response(body, { headers: { 'content-type': type } });
      Object.defineProperty(res, 'body', {
        get() {
          bodiesRead.push(type);
          return readBody.call(res);
        },
      });
      return res;
    };
    let finishStream!: () => void;
    const app = new Hono<ApiEnv>();
    app.use(async (c, next) => {
      c.set('tenantId', 'a');
      await next();
    });
    app.use(tenantAdmission({ maxPerTenant: 1, maxQueued: 10, queueTimeoutMs: 5_000 }));
    app.get('/json', () => watched('{"ok":true}', 'application/json'));
    app.get('/events', () => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('data: 1\n\n'));
          finishStream = () => controller.close();
        },
      });
      return watched(body, 'text/event-stream');
    });
    expect(await (await app.request('/json')).json()).toEqual({ ok: true });
    expect(bodiesRead).toEqual([]);
    const stream = await app.request('/events');
    expect(bodiesRead).toEqual(['text/event-stream']);
    // The tenant's one slot is held while the stream runs: the next request waits for its end.
    let second: Response | undefined;
    const pending = Promise.resolve(app.request('/json')).then((r) => (second = r));
    await new Promise((r) => setTimeout(r, 20));
    expect(second).toBeUndefined();
    finishStream();
    expect(await stream.text()).toBe('data: 1\n\n');
    expect((await pending).status).toBe(200);
  });
});
