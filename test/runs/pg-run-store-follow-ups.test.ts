import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { describeOnDrivers } from '../support/database-drivers.js';
import { runningRuns } from './support/running-runs.js';

/** Follow-ups queued on a run, and the `paused` status a pause on request stores. */
describeOnDrivers('run store: follow-ups and paused runs', (driver) => {
  const { storeOf, start } = runningRuns(driver);
  const followUp = (message: string) => ({ runId: randomUUID(), message });

  it('appends follow-ups in order while the run has not ended, and refuses them once it has', async () => {
    const { runs, id } = await start();
    const first = followUp('one');
    const second = followUp('two');
    expect(await runs.addFollowUp(id, first)).toBe(true);
    expect(await runs.addFollowUp(id, second)).toBe(true);
    expect((await runs.get(id))!.followUps).toEqual([first, second]);
    await runs.update(id, { status: 'completed' }, ['running']);
    expect(await runs.addFollowUp(id, followUp('late'))).toBe(false);
    expect((await runs.get(id))!.followUps).toEqual([first, second]);
  });

  it("adds no follow-up to another tenant's run", async () => {
    const { runs, id } = await start('alpha');
    expect(await storeOf('beta').addFollowUp(id, followUp('beta'))).toBe(false);
    expect((await runs.get(id))!.followUps).toEqual([]);
  });

  it('stores a paused run as waiting: its conversation takes no other turn, it takes follow-ups, and it expires', async () => {
    const { runs, id, conversationId } = await start();
    const created = await runs.create({
      id: randomUUID(),
      agentId: 'a',
      userId: null,
      conversationId: randomUUID(),
      agentVersion: null,
      status: 'running',
      followUps: [followUp('inherited')],
    });
    expect(created.followUps.map((f) => f.message)).toEqual(['inherited']);

    expect(await runs.update(id, { status: 'paused', expiresAt: new Date(Date.now() + 60_000) }, ['running'])).toBe(true);
    expect(await runs.waitingIn(conversationId)).toBe(id);
    expect(await runs.addFollowUp(id, followUp('after the pause'))).toBe(true);
    expect(await runs.update(id, { status: 'running', expiresAt: null }, ['paused'])).toBe(true);
    await runs.update(id, { status: 'paused', expiresAt: new Date(Date.now() - 1) }, ['running']);
    expect(await runs.statusOf(id)).toBe('expired');
    expect(await runs.addFollowUp(id, followUp('too late'))).toBe(false);
  });
});
