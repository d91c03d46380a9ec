import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { FOLLOW_UPS_MAX } from '../../src/runs/follow-ups-limit.js';
import { createPgRunStore } from '../../src/runs/pg-run-store.js';
import { describeOnDrivers } from '../support/database-drivers.js';

/** A run's follow-up queue is bounded: its row and the turns it starts do not grow on a client's say. */
describeOnDrivers('run store: follow-ups per run were unbounded', (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(async () => {
    await database?.close();
  });

  it(`adds at most ${FOLLOW_UPS_MAX} follow-ups to a run, and refuses the next without changing the list`, async () => {
    const runs = createPgRunStore({ db: database.db, tenantId: 'alpha' });
    const id = randomUUID();
    await runs.create({ id, agentId: 'support', userId: null, conversationId: randomUUID(), agentVersion: null, status: 'running' });
    const added = Array.from({ length: FOLLOW_UPS_MAX }, (_, i) => ({ runId: randomUUID(), message: `follow-up ${i}` }));
    for (const followUp of added) expect(await runs.addFollowUp(id, followUp)).toBe(true);
    expect(await runs.addFollowUp(id, { runId: randomUUID(), message: 'one too many' })).toBe(false);
    expect((await runs.get(id))!.followUps).toEqual(added);
  });

  it('counts a run that inherited follow-ups against the same cap', async () => {
    const runs = createPgRunStore({ db: database.db, tenantId: 'alpha' });
    const id = randomUUID();
    const inherited = Array.from({ length: FOLLOW_UPS_MAX - 1 }, (_, i) => ({ runId: randomUUID(), message: `inherited ${i}` }));
    await runs.create({ id, agentId: 'support', userId: null, conversationId: randomUUID(), agentVersion: null, status: 'running', followUps: inherited });
    expect(await runs.addFollowUp(id, { runId: randomUUID(), message: 'last place' })).toBe(true);
    expect(await runs.addFollowUp(id, { runId: randomUUID(), message: 'no place' })).toBe(false);
    expect((await runs.get(id))!.followUps).toHaveLength(FOLLOW_UPS_MAX);
  });
});
