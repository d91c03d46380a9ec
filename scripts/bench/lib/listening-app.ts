import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { AppContext } from '../../../src/app-context.js';
import { createApp } from '../../../src/http/app.js';

export interface ListeningApp {
  /** `http://127.0.0.1:<port>` */
  base: string;
  /** POSTs JSON and reads the JSON reply; a status that is not 2xx throws, with the reply's text. */
  post<T>(path: string, body: unknown): Promise<T>;
  close(): Promise<void>;
}

/** The app over `ctx` on a listening server on 127.0.0.1 (a free port), so benches measure real HTTP. */
export async function listenOnLoopback(ctx: AppContext): Promise<ListeningApp> {
  const listener = serve({ fetch: createApp(ctx).fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((r) => listener.once('listening', () => r()));
  const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  return {
    base,
    async post<T>(path: string, body: unknown): Promise<T> {
      const res = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as T;
    },
    close: () => new Promise<void>((r) => listener.close(() => r())),
  };
}
