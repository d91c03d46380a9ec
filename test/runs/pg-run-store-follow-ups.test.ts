import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { createPgRunStore } from '../../src/runs/pg-run-store.js';
import { describeOnDrivers } from '../support/database-drivers.js';

/** Follow-ups queued on a run, and the `paused` status a pause on request stores. */
describeOnDrivers('run store: follow-ups and paused runs', (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(async () => {
    await database?.close();
  });

  const start = async (tenantId = 'alpha') => {
    const runs = createPgRunStore({ db: database.db, tenantId });
    const id = randomUUID();
    const conversationId = randomUUID();
    await runs.create({ id, agentId: 'support', userId: null, conversationId, agentVersion: null, status: 'running' });
    return { runs, id, conversationId };
  };
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
    expect(await createPgRunStore({ db: database.db, tenantId: 'beta' }).addFollowUp(id, followUp('beta'))).toBe(false);
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
