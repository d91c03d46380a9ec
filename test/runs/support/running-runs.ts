import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import type { Database } from '../../../src/db/database.js';
import { createPgRunStore } from '../../../src/runs/pg-run-store.js';
import type { DatabaseDriver } from '../../support/database-drivers.js';

/**
 * Registers, in the calling `describeOnDrivers` body, a database of the suite's own (closed after
 * all), and returns how its tests start a running run in a tenant's run store.
 */
export function runningRuns(driver: DatabaseDriver) {
  let database: Database | undefined;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(async () => {
    await database?.close();
  });
  const storeOf = (tenantId: string) => createPgRunStore({ db: database!.db, tenantId });
  /** A new running run of agent `support`, in a conversation of its own. */
  const start = async (tenantId = 'alpha') => {
    const runs = storeOf(tenantId);
    const id = randomUUID();
    const conversationId = randomUUID();
    await runs.create({ id, agentId: 'support', userId: null, conversationId, agentVersion: null, status: 'running' });
    return { runs, id, conversationId };
  };
  return { storeOf, start };
}
