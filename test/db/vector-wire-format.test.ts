import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { queryRows } from '../../src/db/query-rows.js';
import { vectorParam } from '../../src/db/sql-arrays.js';
import { vectorToBinary } from '../../src/db/vector-wire-format.js';
import { describeOnDrivers } from '../support/database-drivers.js';

describe('vectorToBinary', () => {
  it('writes dimensions, a zero, then big-endian float4s', () => {
    const bytes = vectorToBinary([1, -2.5, 0.1]);
    expect(bytes.length).toBe(16);
    expect(bytes.readInt16BE(0)).toBe(3);
    expect(bytes.readInt16BE(2)).toBe(0);
    expect([bytes.readFloatBE(4), bytes.readFloatBE(8), bytes.readFloatBE(12)]).toEqual([1, -2.5, Math.fround(0.1)]);
  });
});

describeOnDrivers('pgvector binary format', (driver) => {
  describe('vectors bound in binary', () => {
    let database: Database;
    // Values whose shortest text differs from the float4 they become, and extremes of the range.
    const vector = [0.1, -1 / 3, 1e-38, 3.4e38, 0, -0.000123456789, 123456.789, Math.PI];

    beforeAll(async () => {
      database = await driver.open();
    });
    afterAll(() => database?.close());

    it('is the very bytes pgvector sends, and reads back as the float4 values', async () => {
      const [row] = await queryRows<{ sent: Uint8Array | Buffer; text: string }>(
        database.db,
        sql`SELECT vector_send(${vectorParam(vector)}) AS sent, ${vectorParam(vector)}::text AS text`,
      );
      expect(Buffer.from(row!.sent).equals(vectorToBinary(vector))).toBe(true);
      expect((JSON.parse(row!.text) as number[]).map(Math.fround)).toEqual(vector.map(Math.fround));
    });

    it("is refused with pgvector's own errors for NaN, infinity and a wrong dimension", async () => {
      const db = database.db;
      // Drizzle wraps the driver's error; the database's own message is its cause.
      const refusal = (query: ReturnType<typeof sql>) =>
        queryRows(db, query).then(
          () => 'accepted',
          (err: Error) => (err.cause instanceof Error ? err.cause.message : err.message),
        );
      expect(await refusal(sql`SELECT ${vectorParam([1, Number.NaN])}::text`)).toMatch(/NaN not allowed in vector/);
      expect(await refusal(sql`SELECT ${vectorParam([Number.POSITIVE_INFINITY])}::text`)).toMatch(/infinite value not allowed in vector/);
      expect(await refusal(sql`SELECT ${vectorParam([1, 2])}::vector(3)`)).toMatch(/expected 3 dimensions, not 2/);
    });
  });
});
