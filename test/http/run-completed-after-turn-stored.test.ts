import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import type { AppendedTurn, ConversationStore, NewMessage } from '../../src/conversations/conversation-types.js';
import type { TenantScoped } from '../../src/tenancy/tenant-scoped.js';
import { type Script, type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { type JsonReply, appWithScriptedLlm, call, clearConversations, clearMemories, createTestContext } from './http-test-context.js';

/**
 * A run's end and its turn's storing: a client that polls the run (`GET /v1/runs/:id`) and reads
 * `completed` must find the turn in the conversation, and a cancel is honoured up to the moment
 * the run's end is claimed, never half-way through storing the turn.
 */

/** A promise the test settles. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * The context's conversations, whose `appendTurn` (a turn being stored) is held until `release`:
 * `entered` resolves with the turn's messages once a turn is being stored.
 */
function heldConversations(conversations: TenantScoped<ConversationStore>) {
  const release = gate();
  let enter!: (messages: NewMessage[]) => void;
  const entered = new Promise<NewMessage[]>((resolve) => (enter = resolve));
  const scoped: TenantScoped<ConversationStore> = {
    forTenant(tenantId) {
      const store = conversations.forTenant(tenantId);
      return {
        ...store,
        async appendTurn(input): Promise<AppendedTurn> {
          enter(input.messages);
          await release.opened;
          return store.appendTurn(input);
        },
      };
    },
  };
  return { scoped, entered, release: release.open };
}

const runIdOf = (messages: NewMessage[]) => String(messages[0]?.metadata?.runId);
const contents = (reply: JsonReply) => (reply.body.messages ?? []).map((m: { content: string }) => m.content);

describeOnDrivers('a run and its stored turn', (driver) => {
  let ctx: AppContext;
  let release: (() => Promise<void>) | undefined;
  let server: ScriptedLlmServer | undefined;
  // A held store is let go after each test, so that a failed one leaves no turn waiting on it.
  let letGo: (() => void) | undefined;

  beforeAll(async () => {
    const opened = await driver.provision();
    release = () => opened.release();
    ctx = await createTestContext(opened.env);
  });
  afterAll(async () => {
    await ctx?.close();
    await release?.();
  });
  beforeEach(async () => {
    await clearMemories(ctx);
    await clearConversations(ctx);
  });
  afterEach(async () => {
    letGo?.();
    letGo = undefined;
    await server?.close();
    server = undefined;
  });

  async function appWith(script: Script, conversations: TenantScoped<ConversationStore>): Promise<{ app: Hono; llm: ScriptedLlmServer }> {
    const made = await appWithScriptedLlm(ctx, script, { conversations });
    server = made.llm;
    return made;
  }

  it('a run reads completed only once its turn is stored', async () => {
    const held = heldConversations(ctx.conversations);
    letGo = held.release;
    const { app } = await appWith([reply.text('Oslo is rainy.')], held.scoped);
    const pending = call(app, 'POST', '/v1/chat', { message: 'Weather in Oslo?' });
    const runId = runIdOf(await held.entered);

    // The turn is being stored: a client polling the run must not be told it completed yet.
    const storing = await call(app, 'GET', `/v1/runs/${runId}`);
    expect(storing.body).toMatchObject({ id: runId, status: 'running' });
    const { conversationId } = storing.body;
    expect(contents(await call(app, 'GET', `/v1/conversations/${conversationId}`))).toEqual([]);

    held.release();
    expect((await pending).body).toMatchObject({ runId, status: 'completed', answer: 'Oslo is rainy.' });
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({ status: 'completed', stopReason: 'completed' });
    expect(contents(await call(app, 'GET', `/v1/conversations/${conversationId}`))).toEqual(['Weather in Oslo?', 'Oslo is rainy.']);
  });

  it('refuses a cancel that comes while the turn is stored: the turn is kept, and the run completes', async () => {
    const held = heldConversations(ctx.conversations);
    letGo = held.release;
    const { app } = await appWith([reply.text('Bergen is rainier.')], held.scoped);
    const pending = call(app, 'POST', '/v1/chat', { message: 'Weather in Bergen?' });
    const runId = runIdOf(await held.entered);

    const cancel = await call(app, 'POST', `/v1/runs/${runId}/cancel`);
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.code).toBe('run_not_waiting');

    held.release();
    const done = await pending;
    expect(done.body).toMatchObject({ runId, status: 'completed' });
    expect((await call(app, 'GET', `/v1/runs/${runId}`)).body).toMatchObject({ status: 'completed' });
    expect(contents(await call(app, 'GET', `/v1/conversations/${done.body.conversationId}`))).toEqual(['Weather in Bergen?', 'Bergen is rainier.']);
  });

  it('stores no turn of a run cancelled by another process during its last model call', async () => {
    const answered = gate();
    const { app, llm } = await appWith([reply.text('Tromsø is cold.', { holdUntil: answered.opened })], ctx.conversations);
    const pending = call(app, 'POST', '/v1/chat', { message: 'Weather in Tromsø?' });
    while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    // What a cancel on another instance does: only the row changes, this process's live run is not told.
    await ctx.database.db.execute(sql`UPDATE runs SET status = 'cancelled' WHERE status = 'running'`);
    answered.open();

    const res = await pending;
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('run_cancelled');
    expect((await call(app, 'GET', '/v1/conversations')).body.items).toEqual([]);
  });
});
