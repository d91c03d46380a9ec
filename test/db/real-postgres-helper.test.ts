import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeOnDrivers } from '../support/database-drivers.js';
import { acquireRealPostgres, type RealPostgres } from '../support/real-postgres.js';

/** "0.8.0" -> [0, 8, 0]; compares numerically, part by part. */
function versionAtLeast(version: string, minimum: string): boolean {
  const a = version.split('.').map((p) => Number.parseInt(p, 10) || 0);
  const b = minimum.split('.').map((p) => Number.parseInt(p, 10) || 0);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

describeOnDrivers(
  'acquireRealPostgres',
  () => {
    let server: RealPostgres;

    beforeAll(async () => {
      const acquired = await acquireRealPostgres();
      // describeOnDrivers saw a server: one that vanished since is a failure, not a skip.
      if ('skipReason' in acquired) throw new Error(acquired.skipReason);
      server = acquired;
    });

    afterAll(async () => {
      await server?.release();
    });

    it('has pgvector >= 0.8 and supports iterative index scans', async () => {
      const rows = await query<{ extversion: string }>(server.url, "SELECT extversion FROM pg_extension WHERE extname = 'vector'");
      expect(rows).toHaveLength(1);
      const version = rows[0]!.extversion;
      expect(versionAtLeast(version, '0.8'), `pgvector ${version} < 0.8`).toBe(true);

      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        await client.query('SET hnsw.iterative_scan = relaxed_order');
        const { rows: distance } = await client.query<{ d: number }>("SELECT '[1,0,0]'::vector <=> '[0,1,0]'::vector AS d");
        expect(distance[0]!.d).toBeCloseTo(1);
      } finally {
        await client.end();
      }
    });

    it('gives a private database that is gone after release, even with a connection still open', async () => {
      const url = server.url;
      const database = decodeURIComponent(new URL(url).pathname.slice(1));
      const [current] = await query<{ db: string }>(url, 'SELECT current_database() AS db');
      expect(current!.db).toBe(database);

      const viaServer = process.env.TEST_DATABASE_URL?.trim();
      if (viaServer) expect(database).toMatch(/^memrag_t_[0-9a-f]{12}$/);

      // A connection left open by a careless suite must not make release() fail.
      const straggler = new pg.Client({ connectionString: url });
      straggler.on('error', () => undefined); // it is terminated by the forced drop
      await straggler.connect();

      await server.release();
      await server.release(); // idempotent

      if (viaServer) {
        const rows = await query(viaServer, 'SELECT 1 FROM pg_database WHERE datname = $1', [database]);
        expect(rows).toHaveLength(0);
      }
      // Whichever way it was provided, the database can no longer be reached.
      await expect(query(url, 'SELECT 1')).rejects.toThrow();
      await straggler.end().catch(() => undefined);
    });
  },
  { drivers: ['PostgreSQL server'] },
);
