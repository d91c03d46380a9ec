import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { AppContext } from '../../../src/app-context.js';
import type { RetryOptions } from '../../../src/llm/retry.js';
import type { Script, ScriptedLlmServer } from '../../../testkit/scripted-llm-server.js';
import type { DatabaseDriver } from '../../support/database-drivers.js';
import { appWithScriptedLlm, clearConversations, clearMemories, createApp, createTestContext } from '../http-test-context.js';

export interface ScriptedAgentAppOptions {
  /** Configuration on top of the driver's database. */
  env?: Record<string, string>;
  /**
   * Emptied before each test: memories, conversations, agents and their versions unless `false`;
   * `also` names further tables (runs, blocks) a suite's tests would otherwise see from each other.
   */
  clear?: false | { also?: readonly string[] };
}

export interface ScriptedAppOptions {
  /** Parts of the context swapped in besides the model (a slow knowledge retriever, say). */
  extra?: Partial<AppContext>;
  /** The model's retries; one attempt by default, so that error tests do not sit in backoff. */
  retry?: Partial<RetryOptions>;
}

export interface ScriptedAgentApp {
  ctx(): AppContext;
  /** The app over the context and its configured model, built once per suite. */
  app(): Hono;
  /** The app over a scripted model; its server is closed after the test, with any other the test started. */
  appWithLlm(script: Script, options?: ScriptedAppOptions): Promise<{ app: Hono; llm: ScriptedLlmServer }>;
}

/**
 * Registers, in the calling `describeOnDrivers` body, a test context on `driver`'s database
 * (closed and dropped after all) and the clean-up between tests of the suites that chat with a
 * scripted model.
 */
export function scriptedAgentApp(driver: DatabaseDriver, options: ScriptedAgentAppOptions = {}): ScriptedAgentApp {
  let ctx: AppContext | undefined;
  let app: Hono | undefined;
  let release: (() => Promise<void>) | undefined;
  // Every model server a test started: some tests build more than one app.
  const servers: ScriptedLlmServer[] = [];
  const opened = () => {
    if (!ctx) throw new Error('the scripted agent app is used before its beforeAll ran');
    return ctx;
  };

  beforeAll(async () => {
    const database = await driver.provision();
    release = () => database.release();
    ctx = await createTestContext({ ...database.env, ...options.env });
  });
  afterAll(async () => {
    await ctx?.close();
    await release?.();
  });
  const { clear } = options;
  if (clear !== false) {
    beforeEach(async () => {
      const current = opened();
      await clearMemories(current);
      await clearConversations(current);
      for (const table of ['agents', 'agent_versions', ...(clear?.also ?? [])]) await current.database.db.execute(sql.raw(`DELETE FROM ${table}`));
    });
  }
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  return {
    ctx: opened,
    app: () => {
      app ??= createApp(opened());
      return app;
    },
    async appWithLlm(script, { extra, retry } = {}) {
      const made = await appWithScriptedLlm(opened(), script, extra, retry);
      servers.push(made.llm);
      return made;
    },
  };
}
