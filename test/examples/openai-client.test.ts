import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from '../http/http-test-context.js';

const run = promisify(execFile);

/** examples/openai-client.ts, run as a reader would run it, against a listening memrag (extractive: no LLM). */
describe('examples/openai-client.ts', () => {
  let ctx: AppContext;
  let server: ServerType;
  let base: string;
  beforeAll(async () => {
    ctx = await createTestContext({ API_KEYS: 'example-key' });
    base = await new Promise<string>((resolve) => {
      server = serve({ fetch: createApp(ctx).fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await ctx?.close();
  });

  it('answers from the saved memory, cites it, and streams the next turn of the thread', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/openai-client.ts'], {
      env: { ...process.env, MEMRAG_URL: base, MEMRAG_API_KEY: 'example-key' },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/answer: .*green tea/);
    expect(stdout).toContain('cites [1]: a memory');
    expect(stdout).toMatch(/streamed: .*green tea/);
    const conversation = /conversation: (\S+)/.exec(stdout)?.[1];
    const stored = await ctx.conversations.forTenant('default').load(conversation!, 'default');
    // Both turns in one conversation: the thread's history was not stored twice.
    expect(stored?.conversation.turnCount).toBe(2);
  }, 90_000);
});
