import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type ListeningServer, listen } from '../robustness/support/listening-server.js';
import { createApp, createTestContext } from './http-test-context.js';

const MAX_BODY_BYTES = 4096;
const KEY = 'keep-alive-test-key';
// @hono/node-server gives up draining an unread body after 500 ms and destroys the socket.
const PAST_NODE_SERVER_DRAIN_MS = 700;

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
  socket: Socket;
}

/**
 * The poisoned keep-alive connection: a request refused before its body was read (413 past
 * MAX_BODY_BYTES on the declared length, 401, ...) left the rest of its body on the connection,
 * which the server destroyed half a second later while the client, told keep-alive, sent its
 * next requests down it: one answered, the one after failed with "other side closed".
 */
describe('a poisoned keep-alive connection: requests refused before their body is read', () => {
  let ctx: AppContext;
  let http: ListeningServer;
  let agent: Agent;

  beforeAll(async () => {
    ctx = await createTestContext({ MAX_BODY_BYTES: String(MAX_BODY_BYTES), API_KEYS: `acme:${KEY}` });
    http = await listen(createApp(ctx));
  });
  afterAll(async () => {
    await http?.close();
    await ctx?.close();
  });
  // One connection at a time, kept alive: each request goes down the connection the last one left.
  beforeEach(() => {
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });
  afterEach(() => agent.destroy());

  /** A request through `agent`; a string body is sent with its length, an array of chunks chunked. */
  function send(method: string, path: string, body?: string | string[], headers: Record<string, string> = { authorization: `Bearer ${KEY}` }): Promise<Reply> {
    const { port } = new URL(http.base);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          agent,
          headers: { ...headers, 'content-type': 'application/json', ...(typeof body === 'string' ? { 'content-length': Buffer.byteLength(body) } : {}) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : null, socket: res.socket }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      if (Array.isArray(body)) for (const chunk of body) req.write(chunk);
      req.end(typeof body === 'string' ? body : undefined);
    });
  }

  const search = () => send('POST', '/v1/memories/search', JSON.stringify({ query: 'tea' }));
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** The refusal says close; the two requests after it, the last past the server's drain timeout, share a fresh connection. */
  async function expectServedAfter(refusal: Reply) {
    const second = await search();
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    await pause(PAST_NODE_SERVER_DRAIN_MS);
    const third = await search();
    expect(third.status, JSON.stringify(third.body)).toBe(200);
    expect(refusal.headers.connection).toBe('close');
    expect(second.socket).not.toBe(refusal.socket);
    expect(third.socket).toBe(second.socket);
    expect(third.headers.connection).toBe('keep-alive');
  }

  it('a 413 on the declared length (a 3 MB search), then two more requests on the keep-alive client', async () => {
    const refusal = await send('POST', '/v1/memories/search', JSON.stringify({ query: 'x'.repeat(3 * 1024 * 1024) }));
    expect(refusal.status).toBe(413);
    expect(refusal.body.error.code).toBe('payload_too_large');
    await expectServedAfter(refusal);
  });

  it('a 413 counted while reading a chunked body', async () => {
    const refusal = await send(
      'POST',
      '/v1/memories',
      Array.from({ length: 64 }, () => 'x'.repeat(1024)),
    );
    expect(refusal.status).toBe(413);
    await expectServedAfter(refusal);
  });

  it('a 401 before the body is read', async () => {
    const refusal = await send('POST', '/v1/memories', JSON.stringify({ key: 'k', content: 'y'.repeat(3000) }), {});
    expect(refusal.status).toBe(401);
    await expectServedAfter(refusal);
  });

  it('a 404 for a path nothing serves, with a body', async () => {
    const refusal = await send('POST', '/v1/nowhere', JSON.stringify({ content: 'z'.repeat(3000) }));
    expect(refusal.status).toBe(404);
    await expectServedAfter(refusal);
  });

  it('requests whose body is read, errors included, keep their connection', async () => {
    const first = await send('PUT', '/v1/memories/kept', JSON.stringify({ content: 'Kept on one connection' }));
    expect(first.status).toBe(201);
    // Read, then refused: nothing is left on the wire.
    const invalid = await send('PUT', '/v1/memories/kept', JSON.stringify({ content: 'x', unknown: true }));
    expect(invalid.status).toBe(400);
    await pause(PAST_NODE_SERVER_DRAIN_MS);
    const third = await search();
    expect(third.status).toBe(200);
    for (const reply of [first, invalid, third]) expect(reply.headers.connection).toBe('keep-alive');
    expect(new Set([first.socket, invalid.socket, third.socket]).size).toBe(1);
  });

  it('fetch (undici, the client that met it): 413, then 200 twice, back to back', async () => {
    const post = (body: string) =>
      fetch(`${http.base}/v1/memories/search`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body });
    const statuses: number[] = [];
    for (const query of ['x'.repeat(3 * 1024 * 1024), 'tea', 'tea']) {
      const res = await post(JSON.stringify({ query }));
      statuses.push(res.status);
      await res.text();
    }
    expect(statuses).toEqual([413, 200, 200]);
  });
});
