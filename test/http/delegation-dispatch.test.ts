import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { type ScriptedLlmServer, reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { appWithScriptedLlm, call, createTestContext } from './http-test-context.js';
import { MARK, delegateCall, delegatingAgents, systemOf, toolMessages } from './support/delegating-agents.js';

/** Delegation's dispatch: which agent a `delegate` call runs, with what, and the limits on it; the cast settings. */

describeOnDrivers('agents that delegate', (driver) => {
  const { ctx, appFor, agent, chat } = delegatingAgents(driver);

  it("runs the role's agent on the task: the child's request carries its own instructions and the task, the lead hears its answer", async () => {
    const { app, requestsOf } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'researcher', 'Find the capital of Peru')]), reply.text('Lima, says my researcher.')],
      researcher: [reply.text('The capital of Peru is Lima.')],
    });
    await agent(app, 'researcher');
    await agent(app, 'lead', { cast: [{ agentId: 'researcher', description: 'finds facts' }] });
    const res = await chat(app, 'lead');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', answer: 'Lima, says my researcher.' });

    const [child] = requestsOf('researcher');
    expect(systemOf(child!)).toContain(MARK('researcher'));
    expect(systemOf(child!)).not.toContain(MARK('lead'));
    expect(JSON.stringify(child!.body.messages)).toContain('Find the capital of Peru');
    expect(JSON.stringify(child!.body.messages)).not.toContain('Please help');
    expect(toolMessages(requestsOf('lead')[1]!)).toEqual(['The capital of Peru is Lima.']);

    // Three model calls of 15 tokens each: the lead's two and the child's one.
    const body = res.body as { runId: string; usage: { totalTokens: number } };
    expect(body.usage.totalTokens).toBe(45);
    const run = await call(app, 'GET', `/v1/runs/${body.runId}`);
    expect(run.body).toMatchObject({
      status: 'completed',
      usage: { totalTokens: 45 },
      children: [{ agentId: 'researcher', role: 'researcher', status: 'completed' }],
    });
    const childRunId = (run.body as { children: Array<{ runId: string }> }).children[0]!.runId;
    const childRun = await call(app, 'GET', `/v1/runs/${childRunId}`);
    expect(childRun.body).toMatchObject({ parentRunId: body.runId, role: 'researcher', agentId: 'researcher', usage: { totalTokens: 15 } });

    // The child's conversation is the lead's run's, not the user's.
    const listed = await call(app, 'GET', '/v1/conversations?agentId=researcher&userId=u1');
    expect(listed.status).toBe(200);
    expect((listed.body as { items: unknown[] }).items).toEqual([]);
  });

  it('lists visible roles in the tool description, and still dispatches a hidden one by name', async () => {
    const { app, requestsOf } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'auditor', 'Check the books')]), reply.text('Audited.')],
      auditor: [reply.text('Books are fine.')],
      researcher: [],
    });
    await agent(app, 'auditor');
    await agent(app, 'lead', {
      cast: [
        { agentId: 'researcher', description: 'finds facts' },
        { agentId: 'auditor', description: 'checks the books quietly', hidden: true },
      ],
    });
    const res = await chat(app, 'lead');
    expect(res.body).toMatchObject({ status: 'completed', answer: 'Audited.' });
    const tool = requestsOf('lead')[0]!.body.tools!.find((t) => t.function.name === 'delegate')!;
    expect(tool.function.description).toContain('- researcher: finds facts');
    expect(tool.function.description).not.toContain('auditor');
    expect(toolMessages(requestsOf('lead')[1]!)).toEqual(['Books are fine.']);
  });

  it('runs two delegations of one reply at once', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived = 0;
    const both = () => {
      arrived += 1;
      if (arrived === 2) release();
    };
    const { app, requestsOf } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'a', 'Task A'), delegateCall('d2', 'b', 'Task B')]), reply.text('Both done.')],
      // Each child's reply waits until both children have asked: only concurrent runs get there.
      a: [() => (both(), reply.text('A done', { holdUntil: held }))],
      b: [() => (both(), reply.text('B done', { holdUntil: held }))],
    });
    await agent(app, 'a');
    await agent(app, 'b');
    await agent(app, 'lead', {
      cast: [
        { agentId: 'a', description: 'does A' },
        { agentId: 'b', description: 'does B' },
      ],
    });
    const res = await chat(app, 'lead');
    expect(res.body).toMatchObject({ status: 'completed', answer: 'Both done.' });
    expect(toolMessages(requestsOf('lead')[1]!)).toEqual(['A done', 'B done']);
  });

  it('refuses an unknown role and a cycle with tool errors the model hears', async () => {
    const { app, requestsOf } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'nobody', 'x'), delegateCall('d2', 'ping', 'Bounce it')]), reply.text('Gave up.')],
      ping: [reply.toolCalls([delegateCall('p1', 'lead', 'Back to you')]), reply.text('Ping done.')],
    });
    await agent(app, 'ping', { cast: [{ agentId: 'lead', description: 'the lead' }] });
    await agent(app, 'lead', { cast: [{ agentId: 'ping', description: 'bounces' }], delegation: { maxDepth: 1 } });
    const res = await chat(app, 'lead');
    expect(res.body).toMatchObject({ status: 'completed', answer: 'Gave up.' });
    const [unknown, pinged] = toolMessages(requestsOf('lead')[1]!);
    expect(unknown).toMatch(/unknown role "nobody"/);
    expect(pinged).toBe('Ping done.');
    expect(toolMessages(requestsOf('ping')[1]!)).toEqual([expect.stringMatching(/cycle: lead is already running this task/)]);
  });

  it('answers a call without a task with a tool error, and offers no delegate to an agent that denies it', async () => {
    const { app, requestsOf } = await appFor({
      lead: [reply.toolCalls([{ id: 'd1', name: 'delegate', arguments: JSON.stringify({ role: 'researcher' }) }]), reply.text('Sorry.')],
      shy: [reply.text('No delegation here.')],
      researcher: [],
    });
    await agent(app, 'researcher');
    await agent(app, 'lead', { cast: [{ agentId: 'researcher', description: 'finds facts' }] });
    await agent(app, 'shy', { cast: [{ agentId: 'researcher', description: 'finds facts' }], tools: { deny: ['delegate'] } });
    expect((await chat(app, 'lead')).body).toMatchObject({ status: 'completed', answer: 'Sorry.' });
    expect(toolMessages(requestsOf('lead')[1]!)[0]).toMatch(/Invalid arguments for tool 'delegate'[\s\S]*task/);
    expect(requestsOf('researcher')).toHaveLength(0);
    expect((await chat(app, 'shy')).body).toMatchObject({ status: 'completed' });
    expect((requestsOf('shy')[0]!.body.tools ?? []).map((t) => t.function.name)).not.toContain('delegate');
  });

  it("leaves a child's turns out of episodic recall", async () => {
    const { app } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'researcher', 'What is the zanzibarite vault code?')]), reply.text('Asked.')],
      researcher: [reply.text('The zanzibarite vault code is 4711.')],
    });
    await agent(app, 'researcher');
    await agent(app, 'lead', { cast: [{ agentId: 'researcher', description: 'finds facts' }] });
    expect((await chat(app, 'lead', 'Ask about zanzibarite')).body).toMatchObject({ status: 'completed' });
    await ctx().backgroundTasks.whenIdle();
    const search = async (agentId: string) => {
      const found = await call(app, 'POST', '/v1/turns/search', { query: 'zanzibarite vault code', agentId, userId: 'u1', mode: 'text', topK: 20 });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      return (found.body as { hits: unknown[] }).hits;
    };
    // The lead's own turn is the user's past; the researcher's delegated one is not.
    expect(await search('lead')).toHaveLength(1);
    expect(await search('researcher')).toEqual([]);
  });

  it("stops at the delegating agent's maxDepth", async () => {
    const { app, requestsOf } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'mid', 'Pass it on')]), reply.text('Done.')],
      mid: [reply.toolCalls([delegateCall('m1', 'leaf', 'Do it')]), reply.text('Mid done.')],
      leaf: [],
    });
    await agent(app, 'leaf');
    await agent(app, 'mid', { cast: [{ agentId: 'leaf', description: 'does it' }], delegation: { maxDepth: 1 } });
    await agent(app, 'lead', { cast: [{ agentId: 'mid', description: 'passes on' }] });
    const res = await chat(app, 'lead');
    expect(res.body).toMatchObject({ status: 'completed', answer: 'Done.' });
    expect(toolMessages(requestsOf('mid')[1]!)[0]).toMatch(/depth: leaf would run 2 delegations deep, past this agent's maxDepth of 1/);
    expect(requestsOf('leaf')).toHaveLength(0);
  });

  it("bounds a child's budget by what is left of the lead's", async () => {
    const { app } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'spender', 'Spend')], { usage: { prompt_tokens: 60, completion_tokens: 10 } }), reply.text('Over.')],
      spender: [
        reply.toolCalls([{ id: 's1', name: 'search_memories', arguments: JSON.stringify({ query: 'x' }) }], {
          usage: { prompt_tokens: 40, completion_tokens: 10 },
        }),
      ],
    });
    await agent(app, 'spender');
    await agent(app, 'lead', { cast: [{ agentId: 'spender', description: 'spends' }], budget: { maxTokens: 100 } });
    const res = await chat(app, 'lead');
    const run = await call(app, 'GET', `/v1/runs/${(res.body as { runId: string }).runId}`);
    const childId = (run.body as { children: Array<{ runId: string }> }).children[0]!.runId;
    // 30 tokens were left; the child's first call spent 50, so it stopped there.
    expect((await call(app, 'GET', `/v1/runs/${childId}`)).body).toMatchObject({ status: 'completed', stopReason: 'budget' });
  });
});

describe('cast settings', () => {
  let ctx: AppContext;
  let app: Hono;
  let llm: ScriptedLlmServer | undefined;
  beforeAll(async () => {
    ctx = await createTestContext();
    ({ app, llm } = await appWithScriptedLlm(ctx, []));
  });
  afterAll(async () => {
    await llm?.close();
    await ctx?.close();
  });

  const post = (body: Record<string, unknown>) => call(app, 'POST', '/v1/agents', { name: 'x', ...body });
  const fieldOf = (res: { body: unknown }) => JSON.stringify(res.body);

  it('refuses a cast naming the agent itself, duplicate roles, more than 16 roles and maxDepth out of range, naming the field', async () => {
    const self = await post({ id: 'selfish', cast: [{ agentId: 'selfish', description: 'me' }] });
    expect(self.status).toBe(400);
    expect(fieldOf(self)).toContain('cast.0.agentId');
    const dup = await post({
      id: 'dup',
      cast: [
        { agentId: 'a', description: 'a' },
        { agentId: 'b', role: 'a', description: 'b' },
      ],
    });
    expect(dup.status).toBe(400);
    expect(fieldOf(dup)).toContain('cast.1.role');
    const many = await post({ id: 'many', cast: Array.from({ length: 17 }, (_, i) => ({ agentId: `r${i}`, description: 'r' })) });
    expect(many.status).toBe(400);
    expect(fieldOf(many)).toContain('cast');
    const deep = await post({ id: 'deep', cast: [{ agentId: 'a', description: 'a' }], delegation: { maxDepth: 5 } });
    expect(deep.status).toBe(400);
    expect(fieldOf(deep)).toContain('delegation');
    // Nothing half-written.
    for (const id of ['selfish', 'dup', 'many', 'deep']) expect((await call(app, 'GET', `/v1/agents/${id}`)).status).toBe(404);
    // A patch that makes the agent its own role is refused too.
    expect((await post({ id: 'later' })).status).toBe(201);
    const patched = await call(app, 'PATCH', '/v1/agents/later', { cast: [{ agentId: 'later', description: 'me' }] });
    expect(patched.status).toBe(400);
    expect(fieldOf(patched)).toContain('cast.0.agentId');
  });

  it('accepts a role whose agent does not exist yet', async () => {
    const res = await post({ id: 'early', cast: [{ agentId: 'not-yet', description: 'made later' }], delegation: { maxDepth: 4, maxParallel: 8 } });
    expect(res.status, fieldOf(res)).toBe(201);
  });
});
