import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { type MetadataFilter, type MetadataScalar, matchesMetadataFilter, parseMetadataFilter } from '../../src/retrieval/metadata-filter.js';
import { metadataFilterToSql } from '../../src/retrieval/metadata-filter-sql.js';
import { assertProperty } from '../support/checked-property.js';
import { type DatabaseDriver, describeOnDrivers } from '../support/database-drivers.js';

// Rows covering what a filter can meet: missing keys, nulls, numbers, strings, booleans, nesting.
const ROWS: Record<string, unknown>[] = [
  {},
  { a: 1 },
  { a: 2.5, b: 'x' },
  { a: -3, b: 'y', c: true },
  { a: null, b: 'xy', c: false },
  { a: '1', b: 'Y' },
  { a: 10, b: 'é', c: null },
  { a: [1, 2], b: { n: 1 } },
  { a: 0, b: '', c: true, d: 'apollo' },
  { d: 'apollo', a: 2 },
  { d: 'gemini', a: 7, b: 'x' },
];

const KEYS = ['a', 'b', 'c', 'd', 'missing'];
const SCALARS: MetadataScalar[] = [null, true, false, 0, 1, 2, 2.5, -3, 10, '1', 'x', 'xy', 'y', 'Y', 'é', '', 'apollo', 'gemini'];

const condition = fc.oneof(
  fc.record({ key: fc.constantFrom(...KEYS), op: fc.constantFrom('eq' as const, 'ne' as const), value: fc.constantFrom(...SCALARS) }),
  fc.record({
    key: fc.constantFrom(...KEYS),
    op: fc.constantFrom('gt' as const, 'gte' as const, 'lt' as const, 'lte' as const),
    value: fc.constantFrom(0, 1, 2, 2.5, -3, 'x', 'xy', 'Y', 'apollo'),
  }),
  fc.record({
    key: fc.constantFrom(...KEYS),
    op: fc.constantFrom('in' as const, 'nin' as const),
    values: fc.array(fc.constantFrom(...SCALARS), { maxLength: 3 }),
  }),
  fc.record({ key: fc.constantFrom(...KEYS), op: fc.constant('exists' as const), exists: fc.boolean() }),
) as fc.Arbitrary<MetadataFilter>;
const filters: fc.Arbitrary<MetadataFilter> = fc.letrec<{ f: MetadataFilter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    condition,
    fc.record({ and: fc.array(tie('f'), { maxLength: 3 }) }),
    fc.record({ or: fc.array(tie('f'), { maxLength: 3 }) }),
  ),
})).f;

function metadataFilterSqlSuite(driver: DatabaseDriver) {
  describe('metadataFilterToSql', () => {
    let database: Database | undefined;
    beforeAll(async () => {
      database = await driver.open();
      await database.db.execute(sql`CREATE TABLE metadata_filter_probe (id int PRIMARY KEY, metadata jsonb NOT NULL)`);
      for (const [id, metadata] of ROWS.entries()) {
        await database.db.execute(sql`INSERT INTO metadata_filter_probe VALUES (${id}, ${JSON.stringify(metadata)}::jsonb)`);
      }
    });
    afterAll(async () => {
      await database?.close();
    });
    const matchingIds = async (filter: MetadataFilter) =>
      (
        await queryRows<{ id: number }>(database!.db, sql`SELECT id FROM metadata_filter_probe WHERE ${metadataFilterToSql(filter, sql`metadata`)} ORDER BY id`)
      ).map((r) => Number(r.id));
    const expected = (filter: MetadataFilter) => ROWS.flatMap((row, id) => (matchesMetadataFilter(filter, row) ? [id] : []));

    it('matches the reference semantics on each operator', async () => {
      const parse = (input: unknown) => {
        const parsed = parseMetadataFilter(input);
        if (!parsed.ok) throw new Error('bad filter');
        return parsed.filter;
      };
      expect(await matchingIds(parse({ d: 'apollo' }))).toEqual([8, 9]);
      expect(await matchingIds(parse({ d: 'apollo', a: { $gte: 1 } }))).toEqual([9]);
      expect(await matchingIds(parse({ a: null }))).toEqual([4]);
      expect(await matchingIds(parse({ a: { $exists: true }, c: { $exists: false } }))).toEqual([1, 2, 5, 7, 9, 10]);
      expect(await matchingIds(parse({ b: { $gt: 'x' } }))).toEqual([3, 4, 6]);
      expect(await matchingIds(parse({ $or: [{ a: { $lt: 0 } }, { b: { $in: ['Y', ''] } }] }))).toEqual([3, 5, 8]);
      for (const f of [{ d: 'apollo' }, { a: null }, { b: { $gt: 'x' } }, { a: { $nin: [1, 2] } }])
        expect(await matchingIds(parse(f))).toEqual(expected(parse(f)));
    });

    it('agrees with matchesMetadataFilter on random filters', async () => {
      const { executed } = await assertProperty(
        filters,
        async (filter) => {
          expect(await matchingIds(filter), JSON.stringify(filter)).toEqual(expected(filter));
        },
        { numRuns: 80, seed: 14 },
      );
      expect(executed).toBeGreaterThan(0);
    });

    it('binds keys and values as parameters: quotes and operators in them are data', async () => {
      const hostile: MetadataFilter = { key: "a' OR '1'='1", op: 'eq', value: "x' OR 1=1 --" };
      expect(await matchingIds(hostile)).toEqual([]);
      expect(await matchingIds({ key: "a'?", op: 'exists', exists: false })).toHaveLength(ROWS.length);
    });
  });
}

describeOnDrivers('metadata filters in SQL', metadataFilterSqlSuite);
