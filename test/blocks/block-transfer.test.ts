import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ExportedBlock, exportBlocks, importBlock } from '../../src/blocks/block-transfer.js';
import { createPgBlockStore } from '../../src/blocks/pg-block-store.js';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { describeOnDrivers } from '../support/database-drivers.js';

const EVENTS = 5_000;

describeOnDrivers('block export and import', (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(() => database?.close());

  it("imports a block with a long history: past one INSERT's 65,535 bind parameters", async () => {
    const store = createPgBlockStore({ db: database.db, tenantId: 'transfer-from' });
    await store.put('diary', { agentId: 'a', userId: null }, { value: 'Today.' }, { type: 'api' });
    // Made in SQL: thousands of writes through the store would make the test slow, not truer.
    await database.db.execute(sql`
      INSERT INTO block_history (tenant_id, agent_id, user_id, label, event, value, char_limit, read_only, status, actor, at)
      SELECT 'transfer-from', 'a', '', 'diary', 'written', 'Day ' || n, 2000, false, 'applied', '{"type":"api"}'::jsonb,
             now() - make_interval(secs => ${EVENTS} - n)
      FROM generate_series(1, ${EVENTS}) AS n`);
    const exported: ExportedBlock[] = [];
    for await (const block of exportBlocks(database.db, 'transfer-from', {})) exported.push(block);
    expect(exported).toHaveLength(1);
    expect(exported[0]!.history).toHaveLength(EVENTS + 1);

    expect(await importBlock(database.db, 'transfer-to', exported[0]!)).toEqual({ imported: true, historyEvents: EVENTS + 1 });
    const [row] = await queryRows<{ n: number; last: string }>(
      database.db,
      sql`SELECT count(*)::int AS n, (array_agg(value ORDER BY id DESC))[1] AS last FROM block_history WHERE tenant_id = 'transfer-to'`,
    );
    expect(row).toEqual({ n: EVENTS + 1, last: `Day ${EVENTS}` });
    const imported = createPgBlockStore({ db: database.db, tenantId: 'transfer-to' });
    expect((await imported.get('diary', { agentId: 'a', userId: null }))!.value).toBe('Today.');
  });
});
