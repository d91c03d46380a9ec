import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { concurrencyLimit } from '../../../src/http/middleware/concurrency-limit.js';

/** An app whose handler waits for the test to let each request through, in the order they ran. */
function appWith(limits: Parameters<typeof concurrencyLimit>[0]) {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const app = new Hono();
  app.use(concurrencyLimit(limits));
  app.get('/:name', async (c) => {
    const name = c.req.param('name');
    started.push(name);
    await new Promise<void>((resolve) => gates.set(name, resolve));
    return c.text(name);
  });
  const finish = (name: string) => gates.get(name)!();
  const tick = () => new Promise((r) => setTimeout(r, 10));
  return { app, started, finish, tick };
}

describe('concurrencyLimit', () => {
  it('runs a queued request once a running one answers, in arrival order', async () => {
    const { app, started, finish, tick } = appWith({ maxInFlight: 1, maxQueued: 2, queueTimeoutMs: 5_000 });
    const a = app.request('/a');
    const b = app.request('/b');
    const c = app.request('/c');
    await tick();
    expect(started).toEqual(['a']);
    finish('a');
    expect(await (await a).text()).toBe('a');
    await tick();
    expect(started).toEqual(['a', 'b']);
    finish('b');
    await tick();
    finish('c');
    expect([await (await b).text(), await (await c).text()]).toEqual(['b', 'c']);
  });

  it('answers 503 overloaded with Retry-After at once when the queue is full', async () => {
    const { app, finish, tick } = appWith({ maxInFlight: 1, maxQueued: 1, queueTimeoutMs: 5_000 });
    const a = app.request('/a');
    const b = app.request('/b');
    await tick();
    const c = await app.request('/c');
    expect(c.status).toBe(503);
    expect(c.headers.get('retry-after')).toBe('5');
    expect(((await c.json()) as { error: { code: string } }).error.code).toBe('overloaded');
    finish('a');
    await a;
    await tick();
    finish('b');
    expect((await b).status).toBe(200);
  });

  it('answers 503 to a request that waited past the queue timeout, which never runs', async () => {
    const { app, started, finish, tick } = appWith({ maxInFlight: 1, maxQueued: 10, queueTimeoutMs: 50 });
    const a = app.request('/a');
    await tick();
    const b = await app.request('/b');
    expect(b.status).toBe(503);
    expect(b.headers.get('retry-after')).toBe('1');
    finish('a');
    await a;
    await tick();
    expect(started).toEqual(['a']);
    // The slot came back: the next request runs at once.
    const d = app.request('/d');
    await tick();
    finish('d');
    expect((await d).status).toBe(200);
  });

  it('drops a waiting request whose client hung up, without running it', async () => {
    const { app, started, finish, tick } = appWith({ maxInFlight: 1, maxQueued: 10, queueTimeoutMs: 5_000 });
    const a = app.request('/a');
    await tick();
    const controller = new AbortController();
    const b = app.request(new Request('http://localhost/b', { signal: controller.signal }));
    const c = app.request('/c');
    await tick();
    controller.abort();
    await b;
    finish('a');
    await a;
    await tick();
    expect(started).toEqual(['a', 'c']);
    finish('c');
    expect((await c).status).toBe(200);
  });
});
