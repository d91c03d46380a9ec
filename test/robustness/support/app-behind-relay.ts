import { expect } from 'vitest';
import type { AppContext } from '../../../src/app-context.js';
import { createApp, createTestContext } from '../../http/http-test-context.js';
import type { DatabaseDriver } from '../../support/database-drivers.js';
import { type CuttableProxy, startCuttableProxy } from './cuttable-tcp-proxy.js';
import { type ListeningServer, listen } from './listening-server.js';

/** The app listening on loopback, its database (of the suite's own) reached through a relay the test cuts, stalls and resumes. */
export interface AppBehindRelay {
  /** The database itself, not through the relay: for an administrator's session. */
  databaseUrl: string;
  proxy: CuttableProxy;
  ctx: AppContext;
  http: ListeningServer;
  close(): Promise<void>;
}

export async function startAppBehindRelay(driver: DatabaseDriver, env: Record<string, string>): Promise<AppBehindRelay> {
  const server = await driver.provision();
  const databaseUrl = server.env.DATABASE_URL!;
  let proxy: CuttableProxy | undefined;
  let ctx: AppContext | undefined;
  let http: ListeningServer | undefined;
  const close = async () => {
    await http?.close();
    await ctx?.close();
    await proxy?.close();
    await server.release();
  };
  try {
    proxy = await startCuttableProxy(databaseUrl);
    ctx = await createTestContext({ DATABASE_URL: proxy.proxiedUrl, ...env });
    http = await listen(createApp(ctx));
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
  return { databaseUrl, proxy, ctx, http, close };
}

/** A 503 `database_unavailable` reply, JSON with Retry-After. */
export function expectUnavailable(res: Awaited<ReturnType<ListeningServer['send']>>, what: string): void {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(503);
  expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
  expect(res.body.error, what).toMatchObject({ code: 'database_unavailable', message: expect.any(String), details: null });
  expect(Number(res.headers.get('retry-after')), what).toBeGreaterThanOrEqual(1);
}
