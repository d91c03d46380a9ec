import { expect, it } from 'vitest';
import { reply } from '../../testkit/scripted-llm-server.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { call } from './http-test-context.js';
import { delegateCall, delegatingAgents } from './support/delegating-agents.js';

/** A child its lead waits on, answered directly, went on without the lead, whose own resume then failed. */

describeOnDrivers('a child answered directly instead of through its lead', (driver) => {
  const { appFor, agent, chat } = delegatingAgents(driver);

  it('is refused with 409 answer_through_parent naming the lead, and the lead still resumes it', async () => {
    const { app } = await appFor({
      lead: [reply.toolCalls([delegateCall('d1', 'keeper', 'Forget the note')]), reply.text('Done.')],
      keeper: [reply.toolCalls([{ id: 'k1', name: 'delete_memory', arguments: JSON.stringify({ key: 'note' }) }]), reply.text('Forgotten.')],
    });
    await agent(app, 'keeper');
    await agent(app, 'lead', { cast: [{ agentId: 'keeper', description: 'keeps notes' }] });
    const paused = await chat(app, 'lead');
    const { runId, approvals } = paused.body as { runId: string; approvals: Array<{ runId: string }> };
    const childRunId = approvals[0]!.runId;

    const direct = await call(app, 'POST', `/v1/runs/${childRunId}/approvals`, { decisions: [{ toolCallId: 'k1', approve: true }] });
    expect(direct.status, JSON.stringify(direct.body)).toBe(409);
    expect(direct.body).toMatchObject({ error: { code: 'answer_through_parent' } });
    expect(JSON.stringify(direct.body)).toContain(runId);
    expect((await call(app, 'POST', `/v1/runs/${childRunId}/resume`)).body).toMatchObject({ error: { code: 'answer_through_parent' } });
    expect((await call(app, 'GET', `/v1/runs/${childRunId}`)).body).toMatchObject({ status: 'requires_approval' });

    const resumed = await call(app, 'POST', `/v1/runs/${runId}/approvals`, { decisions: [{ toolCallId: 'k1', approve: true }] });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'completed', answer: 'Done.' });
  });
});
