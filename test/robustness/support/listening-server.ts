import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';

export interface ListeningServer {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** Sends JSON (when `body` is given) and reads the reply as JSON, whatever its status. */
  send(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

/** The app behind a real HTTP server on a free port of 127.0.0.1, as clients see it. */
export async function listen(app: Hono): Promise<ListeningServer> {
  let server: ReturnType<typeof serve> | undefined;
  const base = await new Promise<string>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
  });
  const send: ListeningServer['send'] = async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      throw new Error(`${method} ${path}: a reply that is not JSON (${res.status}): ${text.slice(0, 300)}`);
    }
    return { status: res.status, headers: res.headers, body: parsed };
  };
  return {
    base,
    send,
    close: () =>
      new Promise<void>((resolve) => {
        // Keep-alive sockets of fetch's pool would hold close() open.
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
        server ? server.close(() => resolve()) : resolve();
      }),
  };
}
