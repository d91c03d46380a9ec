import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eraseUserBlocks } from '../../src/blocks/block-erasure.js';
import { createPgBlockStore } from '../../src/blocks/pg-block-store.js';
import type { Database } from '../../src/db/database.js';
import { describeOnDrivers } from '../support/database-drivers.js';

describeOnDrivers("a user's erasure in agents' blocks", (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(() => database?.close());

  it("erases an agent block's events whose actor names the user's conversation, though it names no user", async () => {
    const store = createPgBlockStore({ db: database.db, tenantId: 'erase' });
    await store.put('team', { agentId: 'a', userId: null }, { value: 'Team.' }, { type: 'api' });
    const theirs = randomUUID();
    const others = randomUUID();
    await database.db.execute(
      sql`INSERT INTO conversations (id, tenant_id, agent_id, user_id, title) VALUES (${theirs}, 'erase', 'a', 'u', 't'), (${others}, 'erase', 'a', 'v', 't')`,
    );
    const event = (conversationId: string, value: string) => sql`
      INSERT INTO block_history (tenant_id, agent_id, user_id, label, event, value, status, actor)
      VALUES ('erase', 'a', '', 'team', 'written', ${value}, 'applied',
              jsonb_build_object('type', 'model', 'runId', 'r', 'conversationId', ${conversationId}::text, 'tool', 'block_append'))`;
    await database.db.execute(event(theirs, 'Team.\nTheirs.'));
    await database.db.execute(event(others, 'Team.\nOthers.'));
    expect(await database.db.transaction((tx) => eraseUserBlocks(tx, 'erase', 'u'))).toEqual({ blocks: 0, historyEvents: 1 });
    expect((await store.history('team', { agentId: 'a', userId: null })).events.map((e) => e.value)).toEqual(['Team.', 'Team.\nOthers.']);
  });
});
