import type { Hono } from 'hono';
import { expect, it } from 'vitest';
import { type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { readSse } from '../support/sse-reader.js';
import { call } from './http-test-context.js';
import { scriptedAgentApp } from './support/scripted-agent-app.js';

/**
 * A steer must never get a 202 and then be dropped: once a turn makes no more model calls (its last
 * call under max_iterations, a budget stop, the turn being stored), a steer is refused with a 409.
 */

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const searchCall = { id: 'call_search', name: 'search_memories', arguments: '{"query":"tea"}' };

describeOnDrivers('steers after the last model call of a turn', (driver) => {
  const { appWithLlm } = scriptedAgentApp(driver);
  async function agent(app: Hono, settings: Record<string, unknown>): Promise<string> {
    const res = await call(app, 'POST', '/v1/agents', { name: 'Limited', ...settings });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }
  async function startStreamed(app: Hono, body: Record<string, unknown>) {
    const res = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ stream: true, ...body }),
    });
    const stream = readSse(res);
    const { runId, conversationId } = (await stream.until('retrieval')).data as { runId: string; conversationId: string };
    return { stream, runId, conversationId };
  }
  /** Until the model has been asked: the turn's loop is in its model call, past its step boundary. */
  async function inModelCall(llm: ScriptedLlmServer, n: number) {
    for (let i = 0; i < 400 && llm.requests.length < n; i++) await new Promise((r) => setTimeout(r, 5));
    expect(llm.requests).toHaveLength(n);
  }
  const steer = (app: Hono, runId: string, message: string) => call(app, 'POST', `/v1/runs/${runId}/messages`, { message, mode: 'steer' });

  it('refuses a steer (409 run_finished) during and after the last model call of a max_iterations turn instead of accepting and dropping it', async () => {
    const held = gate();
    const { app, llm } = await appWithLlm([reply.toolCalls([searchCall], { holdUntil: held.opened })]);
    const agentId = await agent(app, { maxIterations: 1 });
    const { stream, runId, conversationId } = await startStreamed(app, { message: 'Is the tea ready?', agentId });

    // The turn's one model call is in flight: nothing can answer a steer any more.
    await inModelCall(llm, 1);
    const during = await steer(app, runId, 'Answer in French');
    expect(during.status).toBe(409);
    expect(during.body.error.code).toBe('run_finished');
    expect((await call(app, 'POST', `/v1/runs/${runId}/pause`)).status).toBe(409);
    held.open();

    const events = await stream.all();
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { stopReason: 'max_iterations' } });
    expect(events.some((e) => e.event === 'steer')).toBe(false);
    const after = await steer(app, runId, 'Answer in French');
    expect(after.status).toBe(409);
    expect(after.body.error.code).toBe('run_finished');
    expect(llm.requests).toHaveLength(1);
    const stored = await call(app, 'GET', `/v1/conversations/${conversationId}?agentId=${agentId}`);
    expect(stored.body.messages.map((m: { content: string | null }) => m.content)).not.toContain('Answer in French');
  });

  it('keeps a steer accepted during a model call that ends the turn on its budget in the turn, and refuses the next one', async () => {
    const held = gate();
    const { app, llm } = await appWithLlm([reply.toolCalls([searchCall], { holdUntil: held.opened, usage: { prompt_tokens: 500, completion_tokens: 20 } })]);
    const agentId = await agent(app, { budget: { maxTokens: 100 } });
    const { stream, runId, conversationId } = await startStreamed(app, { message: 'Is the tea ready?', agentId });

    // A later call could still answer it when it came: accepted.
    await inModelCall(llm, 1);
    expect((await steer(app, runId, 'Be brief')).status).toBe(202);
    held.open();
    const events = await stream.all();
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { stopReason: 'budget' } });
    expect(events.find((e) => e.event === 'steer')?.data).toEqual({ message: 'Be brief' });
    expect(llm.requests).toHaveLength(1);
    // Accepted, it is not lost: the stored turn keeps it after the tool results, where the next call would have read it.
    const stored = await call(app, 'GET', `/v1/conversations/${conversationId}?agentId=${agentId}`);
    expect(stored.body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(stored.body.messages.at(-1).content).toBe('Be brief');
    const after = await steer(app, runId, 'Too late');
    expect(after.status).toBe(409);
    expect(after.body.error.code).toBe('run_finished');
  });
});
