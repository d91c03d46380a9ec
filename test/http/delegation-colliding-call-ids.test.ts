import { expect, it } from 'vitest';
import { reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { call } from './http-test-context.js';
import { delegateCall, delegatingAgents, toolMessages } from './support/delegating-agents.js';

/** Answers were matched by bare toolCallId, so a lead's `call_0` and its child's `call_0` collided. */

describeOnDrivers("a lead's and its child's pending calls that share an id", (driver) => {
  const { ctx, appFor, agent, chat } = delegatingAgents(driver);

  async function pausedOnTwoCall0s() {
    const memories = ctx().memories.forTenant('default');
    await memories.save({ key: 'lead-note', content: 'The lead note', agentId: 'lead', userId: 'u1' });
    await memories.save({ key: 'keeper-note', content: 'The keeper note', agentId: 'keeper', userId: 'u1' });
    const scripted = await appFor({
      lead: [
        reply.toolCalls([
          { id: 'call_0', name: 'delete_memory', arguments: JSON.stringify({ key: 'lead-note' }) },
          delegateCall('call_1', 'keeper', 'Forget keeper-note'),
        ]),
        reply.text('Both handled.'),
      ],
      keeper: [reply.toolCalls([{ id: 'call_0', name: 'delete_memory', arguments: JSON.stringify({ key: 'keeper-note' }) }]), reply.text('Kept it.')],
    });
    await agent(scripted.app, 'keeper');
    await agent(scripted.app, 'lead', { cast: [{ agentId: 'keeper', description: 'keeps notes' }] });
    const paused = await chat(scripted.app, 'lead');
    return { ...scripted, paused, memories };
  }

  it('lists each call with its own run, refuses an ambiguous answer naming decisions.N.runId, and routes answers by (runId, toolCallId)', async () => {
    const { app, paused, memories, requestsOf } = await pausedOnTwoCall0s();
    expect(paused.body, JSON.stringify(paused.body)).toMatchObject({ status: 'requires_approval' });
    const { runId, approvals } = paused.body as { runId: string; approvals: Array<{ toolCallId: string; runId?: string }> };
    expect(approvals.map((a) => a.toolCallId)).toEqual(['call_0', 'call_0']);
    const childRunId = approvals.find((a) => a.runId !== undefined && a.runId !== runId)?.runId;
    expect(childRunId).toBeDefined();
    expect(approvals.filter((a) => a.runId === childRunId)).toHaveLength(1);

    const ambiguous = await call(app, 'POST', `/v1/runs/${runId}/approvals`, {
      decisions: [
        { toolCallId: 'call_0', approve: true },
        { toolCallId: 'call_0', runId: childRunId, approve: false },
      ],
    });
    expect(ambiguous.status, JSON.stringify(ambiguous.body)).toBe(400);
    expect(JSON.stringify(ambiguous.body)).toContain('decisions.0.runId');

    // The lead's own call approved, the child's denied: each reaches its own run.
    const resumed = await call(app, 'POST', `/v1/runs/${runId}/approvals`, {
      decisions: [
        { toolCallId: 'call_0', runId, approve: true },
        { toolCallId: 'call_0', runId: childRunId, approve: false, reason: 'keep it' },
      ],
    });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'completed', answer: 'Both handled.' });
    expect(await memories.get('lead-note', { agentId: 'lead', userId: 'u1' })).toBeNull();
    expect(await memories.get('keeper-note', { agentId: 'keeper', userId: 'u1' })).not.toBeNull();
    expect(toolMessages(requestsOf('lead')[1]!)).toContain('Kept it.');
  });
});
