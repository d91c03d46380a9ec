import { expect, it } from 'vitest';
import { reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { call } from './http-test-context.js';
import { delegateCall, delegatingAgents, toolMessages } from './support/delegating-agents.js';

/** A lead's limits hold over the whole tree below it: its budget counts its children's spend, its maxDepth binds its grandchildren. */

describeOnDrivers('limits a lead sets on its delegations', (driver) => {
  const { appFor, agent, chat } = delegatingAgents(driver);

  it("the children's spend did not count against the lead's own budget", async () => {
    const { app, requestsOf } = await appFor({
      lead: [
        reply.toolCalls([delegateCall('d1', 'spender', 'Spend')]),
        reply.toolCalls([delegateCall('d2', 'spender', 'Spend more')]),
        reply.text('Unreached.'),
      ],
      spender: [reply.text('Spent.', { usage: { prompt_tokens: 80, completion_tokens: 10 } }), reply.text('Spent again.')],
    });
    await agent(app, 'spender');
    await agent(app, 'lead', { cast: [{ agentId: 'spender', description: 'spends' }], budget: { maxTokens: 100 } });
    const res = await chat(app, 'lead');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // The lead's own 15 + 15 are under 100, but with the child's 90 the budget is spent: the second delegation never runs.
    expect(requestsOf('lead')).toHaveLength(2);
    expect(requestsOf('spender')).toHaveLength(1);
    const run = await call(app, 'GET', `/v1/runs/${(res.body as { runId: string }).runId}`);
    expect(run.body).toMatchObject({ status: 'completed', stopReason: 'budget', usage: { totalTokens: 120 } });
  });

  it("a lead's maxDepth of 1 did not stop its child's children", async () => {
    const { app, requestsOf } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'mid', 'Pass it on')]), reply.text('Done.')],
      mid: [reply.toolCalls([delegateCall('m1', 'leaf', 'Do it')]), reply.text('Mid done.')],
      leaf: [reply.text('Leaf done.')],
    });
    await agent(app, 'leaf');
    // The child's own default (2) would allow the grandchild; the lead's 1 does not.
    await agent(app, 'mid', { cast: [{ agentId: 'leaf', description: 'does it' }] });
    await agent(app, 'lead', { cast: [{ agentId: 'mid', description: 'passes on' }], delegation: { maxDepth: 1 } });
    const res = await chat(app, 'lead');
    expect(res.body).toMatchObject({ status: 'completed', answer: 'Done.' });
    expect(toolMessages(requestsOf('mid')[1]!)[0]).toMatch(/depth: leaf would run 2 delegations deep, past lead's maxDepth of 1/);
    expect(requestsOf('leaf')).toHaveLength(0);
  });
});
