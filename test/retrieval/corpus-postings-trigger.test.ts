import { getTableName, sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TURN_CORPUS } from '../../src/conversations/turn-corpus.js';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { PASSAGE_CORPUS } from '../../src/documents/passage-corpus.js';
import { MEMORY_CORPUS } from '../../src/memory/memory-corpus.js';
import { describeOnDrivers } from '../support/database-drivers.js';

// Postings carry no foreign key to their rows (it cost an import 40% of its postings insert): a
// statement trigger on the rows' table deletes them instead. A corpus added without one would keep
// the postings of every row deleted by a path that forgot them, and count them in its statistics.
describeOnDrivers('corpus postings', (driver) => {
  let database: Database;
  beforeAll(async () => {
    database = await driver.open();
  });
  afterAll(() => database?.close());

  it.each([MEMORY_CORPUS, PASSAGE_CORPUS, TURN_CORPUS])(
    "$name: a statement trigger deletes a deleted row's postings, and no key checks them",
    async (corpus) => {
      const table = getTableName(corpus.table);
      const triggers = await queryRows<{ fn: string; args: string[] }>(
        database.db,
        sql`SELECT t.tgfoid::regproc::text AS fn, string_to_array(encode(t.tgargs, 'escape'), '\\000') AS args
        FROM pg_trigger t
        WHERE t.tgrelid = ${table}::regclass AND NOT t.tgisinternal
          AND t.tgtype & 1 = 0 AND t.tgtype & 2 = 0 AND t.tgtype & 8 = 8`,
      );
      expect(triggers).toContainEqual({ fn: 'delete_postings', args: [corpus.bm25.postings, corpus.bm25.documentColumn, ''] });
      const [keys] = await queryRows<{ n: number }>(
        database.db,
        sql`SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = ${corpus.bm25.postings}::regclass AND contype = 'f'`,
      );
      expect(keys!.n).toBe(0);
    },
  );
});
