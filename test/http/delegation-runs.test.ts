import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { parseSse } from '../support/parse-sse.js';
import { call } from './http-test-context.js';
import { delegateCall, delegatingAgents, toolMessages } from './support/delegating-agents.js';

/** Delegated child runs over their life: approvals carried up and down, cancellation, streamed events, erasure. */

describeOnDrivers('agents that delegate', (driver) => {
  const { ctx, appFor, agent, chat } = delegatingAgents(driver);

  it("pauses the lead on a child's approval, and resumes the child then the lead when it is answered through the lead", async () => {
    await ctx().memories.forTenant('default').save({ key: 'old-note', content: 'An old note', agentId: 'keeper', userId: 'u1' });
    const { app, requestsOf } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'keeper', 'Forget the old note')]), reply.text('The keeper forgot it.')],
      keeper: [reply.toolCalls([{ id: 'k1', name: 'delete_memory', arguments: JSON.stringify({ key: 'old-note' }) }]), reply.text('Forgotten.')],
    });
    await agent(app, 'keeper');
    await agent(app, 'lead', { cast: [{ agentId: 'keeper', description: 'keeps notes' }] });
    const paused = await chat(app, 'lead');
    expect(paused.body).toMatchObject({ status: 'requires_approval', approvals: [{ toolCallId: 'k1', name: 'delete_memory' }] });
    const { runId, approvals } = paused.body as { runId: string; approvals: Array<{ runId: string }> };
    const childRunId = approvals[0]!.runId;
    expect(childRunId).not.toBe(runId);
    expect((await call(app, 'GET', `/v1/runs/${childRunId}`)).body).toMatchObject({ status: 'requires_approval', parentRunId: runId });

    const resumed = await call(app, 'POST', `/v1/runs/${runId}/approvals`, { decisions: [{ toolCallId: 'k1', approve: true }] });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'completed', answer: 'The keeper forgot it.' });
    expect(toolMessages(requestsOf('lead')[1]!)).toEqual(['Forgotten.']);
    expect((await call(app, 'GET', `/v1/runs/${childRunId}`)).body).toMatchObject({ status: 'completed' });
    expect(await ctx().memories.forTenant('default').get('old-note', { agentId: 'keeper', userId: 'u1' })).toBeNull();
    // Four model calls of 15 tokens: the lead's two and the keeper's two.
    expect(resumed.body).toMatchObject({ usage: { totalTokens: 60 } });
  });

  it("carries a grandchild's approval up to the lead, with the grandchild's runId, and back down when answered", async () => {
    await ctx().memories.forTenant('default').save({ key: 'deep-note', content: 'A deep note', agentId: 'keeper', userId: 'u1' });
    const { app, requestsOf } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'mid', 'Have the note forgotten')]), reply.text('Mid says it is done.')],
      mid: [reply.toolCalls([delegateCall('m1', 'keeper', 'Forget deep-note')]), reply.text('Keeper did it.')],
      keeper: [reply.toolCalls([{ id: 'k1', name: 'delete_memory', arguments: JSON.stringify({ key: 'deep-note' }) }]), reply.text('Forgotten.')],
    });
    await agent(app, 'keeper');
    await agent(app, 'mid', { cast: [{ agentId: 'keeper', description: 'keeps notes' }] });
    await agent(app, 'lead', { cast: [{ agentId: 'mid', description: 'passes on' }] });
    const paused = await chat(app, 'lead');
    expect(paused.body).toMatchObject({ status: 'requires_approval', approvals: [{ toolCallId: 'k1' }] });
    const { runId, approvals } = paused.body as { runId: string; approvals: Array<{ runId: string }> };
    const keeperRun = (await call(app, 'GET', `/v1/runs/${approvals[0]!.runId}`)).body as { agentId: string; parentRunId: string };
    expect(keeperRun.agentId).toBe('keeper');
    expect((await call(app, 'GET', `/v1/runs/${keeperRun.parentRunId}`)).body).toMatchObject({
      agentId: 'mid',
      parentRunId: runId,
      status: 'requires_approval',
    });

    const resumed = await call(app, 'POST', `/v1/runs/${runId}/approvals`, { decisions: [{ toolCallId: 'k1', approve: true }] });
    expect(resumed.body).toMatchObject({ status: 'completed', answer: 'Mid says it is done.' });
    expect(toolMessages(requestsOf('mid')[1]!)).toEqual(['Forgotten.']);
    expect(toolMessages(requestsOf('lead')[1]!)).toEqual(['Keeper did it.']);
    expect(await ctx().memories.forTenant('default').get('deep-note', { agentId: 'keeper', userId: 'u1' })).toBeNull();
  });

  it('cancels the children of a cancelled lead', async () => {
    const { app } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'keeper', 'Forget it')])],
      keeper: [reply.toolCalls([{ id: 'k1', name: 'delete_memory', arguments: JSON.stringify({ key: 'x' }) }])],
    });
    await agent(app, 'keeper');
    await agent(app, 'lead', { cast: [{ agentId: 'keeper', description: 'keeps notes' }] });
    const paused = await chat(app, 'lead');
    const { runId, approvals } = paused.body as { runId: string; approvals: Array<{ runId: string }> };
    const cancelled = await call(app, 'POST', `/v1/runs/${runId}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', children: [{ status: 'cancelled' }] });
    expect((await call(app, 'GET', `/v1/runs/${approvals[0]!.runId}`)).body).toMatchObject({ status: 'cancelled' });
  });

  it("streams delegate_start, the child's own events and delegate_end", async () => {
    const { app } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'researcher', 'Find it')]), reply.text('Found.')],
      researcher: [reply.text('It is here.')],
    });
    await agent(app, 'researcher');
    await agent(app, 'lead', { cast: [{ agentId: 'researcher', description: 'finds facts' }] });
    const res = await app.request('/v1/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Please help', agentId: 'lead', userId: 'u1', stream: true }),
    });
    const events = parseSse(await res.text());
    const start = events.find((e) => e.event === 'delegate_start')!;
    expect(start.data).toMatchObject({ role: 'researcher', agentId: 'researcher' });
    const childRunId = start.data.runId as string;
    expect(events.find((e) => e.event === 'delegate_end')!.data).toEqual({ runId: childRunId, status: 'completed' });
    const forwarded = events.filter((e) => e.event === 'child').map((e) => e.data);
    expect(forwarded.length).toBeGreaterThan(0);
    expect(forwarded.every((d) => d.runId === childRunId)).toBe(true);
    expect(forwarded.some((d) => d.event.type === 'delta' && String(d.event.text).length > 0)).toBe(true);
    expect(events.findIndex((e) => e.event === 'delegate_end')).toBeLessThan(events.findIndex((e) => e.event === 'done'));
  });

  it('cancels a running child when its lead is cancelled', async () => {
    let childAsked!: () => void;
    const asked = new Promise<void>((resolve) => (childAsked = resolve));
    const never = new Promise<void>(() => {});
    const { app } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'slow', 'Take your time')])],
      slow: [() => (childAsked(), reply.text('too late', { holdUntil: never }))],
    });
    await agent(app, 'slow');
    await agent(app, 'lead', { cast: [{ agentId: 'slow', description: 'slow' }] });
    const turn = chat(app, 'lead');
    await asked;
    const children = (await ctx().database.db.execute(sql`SELECT id, parent_run_id FROM runs WHERE parent_run_id IS NOT NULL`)) as unknown as {
      rows: Array<{ id: string; parent_run_id: string }>;
    };
    const [child] = children.rows;
    const cancelled = await call(app, 'POST', `/v1/runs/${child!.parent_run_id}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect((await turn).status).toBe(409);
    await expect.poll(async () => ((await call(app, 'GET', `/v1/runs/${child!.id}`)).body as { status: string }).status).toBe('cancelled');
  });

  it("erases a user's child runs and child conversations with the user", async () => {
    const { app } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'researcher', 'Find it')]), reply.text('Found.')],
      researcher: [reply.text('Here.')],
    });
    await agent(app, 'researcher');
    await agent(app, 'lead', { cast: [{ agentId: 'researcher', description: 'finds facts' }] });
    expect((await chat(app, 'lead')).body).toMatchObject({ status: 'completed' });
    await ctx().backgroundTasks.whenIdle();
    const count = async (query: ReturnType<typeof sql>) =>
      Number(((await ctx().database.db.execute(query)) as unknown as { rows: Array<{ n: number | string }> }).rows[0]!.n);
    expect(await count(sql`SELECT count(*) AS n FROM conversations WHERE parent_conversation_id IS NOT NULL`)).toBe(1);
    expect(await count(sql`SELECT count(*) AS n FROM runs WHERE parent_run_id IS NOT NULL`)).toBe(1);
    expect((await call(app, 'DELETE', '/v1/users/u1')).status).toBe(200);
    expect(await count(sql`SELECT count(*) AS n FROM conversations`)).toBe(0);
    expect(await count(sql`SELECT count(*) AS n FROM runs`)).toBe(0);
  });
});
