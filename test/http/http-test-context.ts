import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import type { Hono } from 'hono';
import { type AppContext, createAppContext, createTenantChat, createTenantExtractors } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createApp as createHttpApp } from '../../src/http/app.js';
import { describeError } from '../../src/api/error-mapping.js';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import type { RetryOptions } from '../../src/llm/retry.js';
import { createHashEmbedder } from '../../testkit/hash-embedder.js';
import { type Script, type ScriptedLlmServer, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';

/**
 * An app over an in-memory PGlite and the hash embedder; `env` overrides configuration. Memory
 * extraction is off unless `env` turns it on: tests that script a model's every reply would
 * otherwise see the extraction's requests take some of them.
 */
export async function createTestContext(env: Record<string, string> = {}): Promise<AppContext> {
  const config = loadConfig({ DATA_DIR: 'memory://', LOG_LEVEL: 'silent', MEMORY_EXTRACTION: 'off', ...env });
  return createAppContext(config, { embedder: createHashEmbedder(64), describeError });
}

export async function clearMemories(ctx: AppContext): Promise<void> {
  await ctx.database.db.execute(sql`DELETE FROM memories`);
  // The history too: a read as of a moment rebuilds memories from it.
  await ctx.database.db.execute(sql`DELETE FROM memory_history`);
  // Postings go with their memories (ON DELETE CASCADE); the BM25 statistics must go too.
  await ctx.database.db.execute(sql`DELETE FROM memory_term_stats`);
  await ctx.database.db.execute(sql`DELETE FROM memory_corpus_stats`);
}

/**
 * Deletes every conversation, with its turns: a chat recalls the turns of the agent's other
 * conversations, so tests asserting exact sources start from none. Waits for after-turn work first.
 */
export async function clearConversations(ctx: AppContext): Promise<void> {
  await ctx.backgroundTasks.whenIdle();
  // Messages, checkpoints, turns and their postings go with their conversations (ON DELETE CASCADE).
  await ctx.database.db.execute(sql`DELETE FROM conversations`);
  await ctx.database.db.execute(sql`DELETE FROM turn_term_stats`);
  await ctx.database.db.execute(sql`DELETE FROM turn_corpus_stats`);
}

export interface JsonReply {
  status: number;
  headers: Headers;
  // Tests read the shape they expect; a wrong guess fails the assertion, not the compiler.
  body: any;
}

/** Sends a request through `app.request()`; a non-string body is sent as JSON. */
export async function call(app: Hono, method: string, path: string, body?: unknown): Promise<JsonReply> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const res = await app.request(path, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as unknown) : null };
}

/**
 * The app over `ctx`. Tests swap parts of a context (`{ ...ctx, llm }`); the chat that
 * createAppContext built over the original parts is rebuilt over the ones passed.
 */
export function createApp(ctx: AppContext): ReturnType<typeof createHttpApp> {
  const extractors = createTenantExtractors(ctx);
  return createHttpApp({ ...ctx, extractors, chat: createTenantChat({ ...ctx, extractors }, { describeError }) });
}

/**
 * An app over `ctx` whose chat talks to a scripted LLM (model `test-model`), one attempt only so
 * that error tests do not sit in backoff unless `retry` asks for more. The caller closes the returned server.
 */
export async function appWithScriptedLlm(
  ctx: AppContext,
  script: Script,
  extra: Partial<AppContext> = {},
  retry: Partial<RetryOptions> = { maxAttempts: 1 },
): Promise<{ app: Hono; llm: ScriptedLlmServer }> {
  const server = await startScriptedLlmServer(script);
  const llm = createLlmProvider({ baseURL: server.url, apiKey: 'test-key', model: 'test-model', retry });
  return { app: createApp({ ...ctx, llm, ...extra }), llm: server };
}

export interface AppFixture {
  readonly ctx: AppContext;
  readonly app: Hono;
}

/**
 * Registers, in the calling file or `describe`, an app over a fresh test context (closed after
 * all) whose memories are cleared before each test: the set-up of the memory route tests.
 */
export function memoryAppFixture(): AppFixture {
  let current: { ctx: AppContext; app: Hono } | undefined;
  beforeAll(async () => {
    const ctx = await createTestContext();
    current = { ctx, app: createApp(ctx) };
  });
  afterAll(async () => {
    await current?.ctx.close();
  });
  beforeEach(async () => {
    await clearMemories(fixtureState().ctx);
  });
  const fixtureState = () => {
    if (!current) throw new Error('the app fixture is used before its beforeAll ran');
    return current;
  };
  return {
    get ctx() {
      return fixtureState().ctx;
    },
    get app() {
      return fixtureState().app;
    },
  };
}
