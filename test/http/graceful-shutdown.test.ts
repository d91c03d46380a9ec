import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { afterEach, describe, expect, it } from 'vitest';
import { drainServer } from '../../src/http/graceful-shutdown.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the error code of a fresh TCP connection attempt, or 'connected'. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('drainServer, on a listening server', () => {
  let server: ServerType | undefined;
  const started = new Set<string>();
  let endlessAborted = false;

  const app = new Hono();
  app.get('/slow', async (c) => {
    started.add('slow');
    await sleep(800);
    return c.text('slow done');
  });
  app.get('/stream', (c) =>
    streamSSE(c, async (stream) => {
      started.add('stream');
      for (let i = 0; i < 8; i++) {
        await stream.writeSSE({ event: 'tick', data: String(i) });
        await stream.sleep(100);
      }
      await stream.writeSSE({ event: 'done', data: 'end' });
    }),
  );
  app.get('/endless', (c) =>
    streamSSE(c, async (stream) => {
      started.add('endless');
      c.req.raw.signal.addEventListener('abort', () => (endlessAborted = true));
      while (!stream.aborted) {
        await stream.writeSSE({ event: 'tick', data: 'x' });
        await stream.sleep(50);
      }
    }),
  );

  async function listen(): Promise<number> {
    started.clear();
    endlessAborted = false;
    return new Promise((resolve) => {
      server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(info.port));
    });
  }
  async function until(what: string) {
    while (!started.has(what)) await sleep(10);
  }
  afterEach(async () => {
    if (server?.listening) await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  });

  it('refuses new connections at once, and lets a slow request and a stream in flight finish', async () => {
    const port = await listen();
    const slow = fetch(`http://127.0.0.1:${port}/slow`).then(async (r) => [r.status, await r.text()]);
    const stream = fetch(`http://127.0.0.1:${port}/stream`).then((r) => r.text());
    await until('slow');
    await until('stream');
    // An idle keep-alive connection must not hold the shutdown.
    await (await fetch(`http://127.0.0.1:${port}/missing`)).text();

    const t0 = performance.now();
    const drain = drainServer(server!, 5_000);
    expect(await tryConnect(port)).toBe('ECONNREFUSED');

    expect(await slow).toEqual([200, 'slow done']);
    const events = await stream;
    expect(events.match(/event: tick/g)).toHaveLength(8);
    expect(events).toContain('event: done');
    expect(await drain).toEqual({ drained: true });
    // Done when the last response was, not at the deadline.
    expect(performance.now() - t0).toBeLessThan(3_000);
  });

  it('cuts what is still running at the deadline, aborting its request signal', async () => {
    const port = await listen();
    const reading = fetch(`http://127.0.0.1:${port}/endless`).then(async (r) => {
      try {
        await r.text();
        return 'ended';
      } catch {
        return 'cut';
      }
    });
    await until('endless');
    const t0 = performance.now();
    expect(await drainServer(server!, 300)).toEqual({ drained: false });
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(2_000);
    expect(await reading).toBe('cut');
    await sleep(50);
    expect(endlessAborted).toBe(true);
  });
});
