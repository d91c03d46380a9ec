import { sql } from 'drizzle-orm';
import { afterEach, expect, it } from 'vitest';
import type { AppendedTurn, ConversationStore, NewMessage } from '../../src/conversations/conversation-types.js';
import type { TenantScoped } from '../../src/tenancy/tenant-scoped.js';
import { type Script, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { signal } from '../support/signal.js';
import { type JsonReply, call } from './http-test-context.js';
import { scriptedAgentApp } from './support/scripted-agent-app.js';

/**
 * A run's end and its turn's storing: a client that polls the run (`GET /v1/runs/:id`) and reads
 * `completed` must find the turn in the conversation, and a cancel is honoured up to the moment
 * the run's end is claimed, never half-way through storing the turn.
 */

/**
 * The context's conversations, whose `appendTurn` (a turn being stored) is held until `release`:
 * `entered` resolves with the turn's messages once a turn is being stored.
 */
function heldConversations(conversations: TenantScoped<ConversationStore>) {
  const release = signal();
  const entered = signal<NewMessage[]>();
  const scoped: TenantScoped<ConversationStore> = {
    forTenant(tenantId) {
      const store = conversations.forTenant(tenantId);
      return {
        ...store,
        async appendTurn(input): Promise<AppendedTurn> {
          entered.resolve(input.messages);
          await release.promise;
          return store.appendTurn(input);
        },
      };
    },
  };
  return { scoped, entered: entered.promise, release: release.resolve };
}

const runIdOf = (messages: NewMessage[]) => String(messages[0]?.metadata?.runId);
const contents = (reply: JsonReply) => (reply.body.messages ?? []).map((m: { content: string }) => m.content);

describeOnDrivers('a run and its stored turn', (driver) => {
  const { ctx: context, appWithLlm } = scriptedAgentApp(driver);
  // A held store is let go after each test (before its model server closes), so that a failed one leaves no turn waiting on it.
  let letGo: (() => void) | undefined;
  afterEach(() => {
    letGo?.();
    letGo = undefined;
  });

  const appWith = (script: Script, conversations: TenantScoped<ConversationStore>) => appWithLlm(script, { extra: { conversations } });

  it('a run reads completed only once its turn is stored', async () => {
    const held = heldConversations(context().conversations);
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
    const held = heldConversations(context().conversations);
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
    const answered = signal();
    const { app, llm } = await appWith([reply.text('Tromsø is cold.', { holdUntil: answered.promise })], context().conversations);
    const pending = call(app, 'POST', '/v1/chat', { message: 'Weather in Tromsø?' });
    while (llm.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    // What a cancel on another instance does: only the row changes, this process's live run is not told.
    await context().database.db.execute(sql`UPDATE runs SET status = 'cancelled' WHERE status = 'running'`);
    answered.resolve();

    const res = await pending;
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('run_cancelled');
    expect((await call(app, 'GET', '/v1/conversations')).body.items).toEqual([]);
  });
});
