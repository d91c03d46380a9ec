import type { Hono } from 'hono';
import { afterAll, beforeAll } from 'vitest';
import { createLlmProvider } from '../../src/llm/llm-provider.js';
import type { AppContext } from '../../src/app-context.js';
import { createApp, createTestContext } from '../http/http-test-context.js';
import { type ScriptedLlmServer, startScriptedLlmServer } from '../../testkit/scripted-llm-server.js';
import { conversationModel } from '../../testkit/scripted-conversation-llm.js';
import type { DatabaseDriver, ProvisionedDatabase } from '../support/database-drivers.js';

export interface ConversationHarness {
  ctx: AppContext;
  llm: ScriptedLlmServer;
  app: Hono;
}

export interface ScriptedConversationFixture {
  /** The suite's app context, once `beforeAll` has run. */
  readonly ctx: AppContext;
  /** A new scripted LLM server and an app whose chat model is `model` on it; closed after the suite. */
  harness(options?: Parameters<typeof conversationModel>[0]): Promise<ConversationHarness>;
}

/**
 * The set-up the long conversation suites share, registered in the calling `describe`: a database
 * of the driver's own, an app context with `env`, and 17 long memories so that every
 * search_memories result costs a few hundred tokens.
 */
export function scriptedConversationFixture(driver: DatabaseDriver, env: Record<string, string>, model: string): ScriptedConversationFixture {
  let database: ProvisionedDatabase | undefined;
  let ctx: AppContext | undefined;
  const servers: ScriptedLlmServer[] = [];

  beforeAll(async () => {
    database = await driver.provision();
    ctx = await createTestContext({ ...env, ...database.env });
    for (let i = 0; i < 17; i++) {
      await ctx.memories
        .forTenant('default')
        .save({ key: `note-${i}`, content: `Notes on subject ${i}: ${'a fairly long note about the subject, with details. '.repeat(6)}` });
    }
  });
  afterAll(async () => {
    await ctx?.close();
    await database?.release();
    for (const server of servers) await server.close();
  });

  const current = (): AppContext => {
    if (!ctx) throw new Error('the conversation fixture is used before its beforeAll ran');
    return ctx;
  };
  return {
    get ctx() {
      return current();
    },
    async harness(options = {}) {
      const llm = await startScriptedLlmServer(conversationModel(options));
      servers.push(llm);
      const provider = createLlmProvider({ baseURL: llm.url, apiKey: 'k', model, retry: { maxAttempts: 1 } });
      return { ctx: current(), llm, app: createApp({ ...current(), llm: provider }) };
    },
  };
}
