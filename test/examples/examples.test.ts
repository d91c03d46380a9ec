import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { type ServerType, serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type ScriptedRequest, reply, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { createApp, createTestContext } from '../http/http-test-context.js';

const run = promisify(execFile);
const KEY = 'example-key';

/** How each file in examples/ is run, as its header comment tells a reader to run it. */
const RUNNERS: Record<string, string[]> = {
  'ai-sdk-middleware.ts': [process.execPath, '--import', 'tsx', 'examples/ai-sdk-middleware.ts'],
  'ai-sdk-tools.ts': [process.execPath, '--import', 'tsx', 'examples/ai-sdk-tools.ts'],
  'chat-completions.sh': ['sh', 'examples/chat-completions.sh'],
  // openai-client.test.ts checks its answers and citations as well.
  'openai-client.ts': [process.execPath, '--import', 'tsx', 'examples/openai-client.ts'],
  'typed-client.ts': [process.execPath, '--import', 'tsx', 'examples/typed-client.ts'],
};

/**
 * Every example, run as written against a listening memrag without an LLM: the AI SDK examples'
 * model is memrag's own `/v1` unless OPENAI_BASE_URL names another, so none needs a cloud key.
 */
describe('examples/', () => {
  let ctx: AppContext;
  let server: ServerType;
  let base: string;
  // The reader's environment, less whatever model this machine points at: the examples must run without one.
  const { OPENAI_BASE_URL: _url, OPENAI_API_KEY: _key, OPENAI_MODEL: _model, AI_GATEWAY_API_KEY: _gateway, ...env } = process.env;
  const runExample = async (name: string, extra: Record<string, string> = {}) => {
    const [command, ...args] = RUNNERS[name]!;
    return run(command!, args, { env: { ...env, MEMRAG_URL: base, MEMRAG_API_KEY: KEY, ...extra }, timeout: 60_000 });
  };

  beforeAll(async () => {
    ctx = await createTestContext({ API_KEYS: KEY });
    base = await new Promise<string>((resolve) => {
      server = serve({ fetch: createApp(ctx).fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(`http://127.0.0.1:${info.port}`));
    });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await ctx?.close();
  });

  it('has a runner for every file in examples/', () => {
    expect(readdirSync('examples').sort()).toEqual(Object.keys(RUNNERS).sort());
  });

  it.each(Object.keys(RUNNERS))(
    'runs %s to exit 0 with no model configured',
    async (name) => {
      // execFile rejects on a non-zero exit, with the output in the error.
      const { stdout } = await runExample(name);
      expect(stdout.trim()).not.toBe('');
    },
    90_000,
  );

  // A memory saved without a user is shared: every user's chat would recall the example's.
  it("saves typed-client.ts's memory as Ada's, not as a shared one", async () => {
    await runExample('typed-client.ts');
    const memories = ctx.memories.forTenant('default');
    expect(await memories.get('favourite-tea', { userId: 'ada' })).toMatchObject({ userId: 'ada' });
    expect(await memories.get('favourite-tea', {})).toBeNull();
  }, 90_000);

  it('stores both turns of ai-sdk-middleware.ts in one conversation of Ada', async () => {
    const { stdout } = await runExample('ai-sdk-middleware.ts');
    const conversationId = /stored in conversation (\S+)/.exec(stdout)?.[1];
    const stored = await ctx.conversations.forTenant('default').load(conversationId!, 'default');
    expect(stored?.conversation).toMatchObject({ userId: 'ada', turnCount: 2 });
  }, 90_000);

  it("saves and finds Ada's memory through ai-sdk-tools.ts when the model calls the tools", async () => {
    // A model that saves on the first prompt and searches on the second, then answers from the tool result.
    const model = await startScriptedLlmServer((request: ScriptedRequest) => {
      const messages = request.body.messages;
      const last = messages[messages.length - 1]!;
      if (last.role === 'tool') return reply.text(`From memory: ${String(last.content)}`);
      if (JSON.stringify(last.content).includes('Remember'))
        return reply.toolCalls([{ name: 'saveMemory', arguments: JSON.stringify({ key: 'morning-drink', content: 'Ada drinks green tea every morning.' }) }]);
      return reply.toolCalls([{ name: 'searchMemories', arguments: JSON.stringify({ query: 'morning drink' }) }]);
    });
    try {
      const { stdout } = await runExample('ai-sdk-tools.ts', { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'model-key', OPENAI_MODEL: 'test-model' });
      expect(stdout).toContain('called searchMemories');
      expect(stdout).toMatch(/From memory: .*green tea/);
      const saved = await ctx.memories.forTenant('default').get('morning-drink', { userId: 'ada' });
      expect(saved?.content).toBe('Ada drinks green tea every morning.');
      expect(model.requests.every((r) => r.body.model === 'test-model' && r.headers.authorization === 'Bearer model-key')).toBe(true);
    } finally {
      await model.close();
    }
  }, 90_000);
});
