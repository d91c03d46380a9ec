import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { QUERY_TIMEOUT_GRACE_MS, openDatabase } from '../../src/db/database.js';
import { isDatabaseUnavailable } from '../../src/db/database-unavailable.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { type AppBehindRelay, expectUnavailable, startAppBehindRelay } from './support/app-behind-relay.js';
import type { CuttableProxy } from './support/cuttable-tcp-proxy.js';
import type { ListeningServer } from './support/listening-server.js';
import { markerWord } from './support/marker-word.js';

const STATEMENT_TIMEOUT_MS = 1_000;
const CONNECT_TIMEOUT_MS = 1_000;
// Far past the bound below: what answers a request to a hung database is never the request timeout.
const REQUEST_TIMEOUT_MS = 30_000;
// A request waits for a connection, then for its statement's answer (pg gives up QUERY_TIMEOUT_GRACE_MS after the server would have).
const BOUND_MS = CONNECT_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_GRACE_MS;
const SLACK_MS = 1_500;

/**
 * The hung database: a database that stops answering (connections open, nothing comes back)
 * held every request, and the pool's connections, until TCP gave up on them; the request timeout
 * answered 504 where it applied, and the chat waited without end. Now DATABASE_STATEMENT_TIMEOUT_MS
 * and DATABASE_CONNECT_TIMEOUT_MS turn it into 503 `database_unavailable` within a bound, and the
 * server serves again by itself once the database answers, without a connection being cut.
 * The app reaches the shared server through a TCP relay that the test pauses and resumes.
 */
describeOnDrivers(
  'the hung database: statement and connection timeouts',
  (driver) => {
    let app: AppBehindRelay | undefined;
    let proxy: CuttableProxy;
    let http: ListeningServer;

    beforeAll(async () => {
      app = await startAppBehindRelay(driver, {
        DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      });
      ({ proxy, http } = app);
    });
    afterAll(() => app?.close());

    const send = (method: string, path: string, body?: unknown) => http.send(method, path, body);

    async function timed<T>(work: Promise<T>): Promise<{ result: T; ms: number }> {
      const started = Date.now();
      const result = await work;
      return { result, ms: Date.now() - started };
    }

    it('paused: every request answers 503 database_unavailable within the bound; resumed: 200 again, nothing cut, nothing lost', async () => {
      const saved = Array.from({ length: 12 }, (_, i) => ({ key: `before-${i}`, content: `Saved before the hang ${markerWord(i)}` }));
      // In parallel: the pool holds several open connections when the database hangs.
      const before = await Promise.all(saved.map((m) => send('PUT', `/v1/memories/${m.key}`, { content: m.content })));
      expect(before.map((r) => r.status)).toEqual(saved.map(() => 201));

      proxy.stall();
      const during: [string, string, string, unknown?][] = [
        ['list', 'GET', '/v1/memories?limit=1'],
        ['read', 'GET', `/v1/memories/${saved[0]!.key}`],
        ['save (a transaction)', 'PUT', '/v1/memories/during', { content: 'sent into a hung database' }],
        ['delete (a transaction)', 'DELETE', `/v1/memories/${saved[1]!.key}`],
        ['memory search', 'POST', '/v1/memories/search', { query: 'saved before the hang' }],
        ['tags', 'GET', '/v1/tags'],
        ['conversations', 'GET', '/v1/conversations'],
        ['knowledge search', 'POST', '/v1/search', { query: 'hang' }],
        // No request timeout applies to the chat: before the statement timeout it waited without end.
        ['chat', 'POST', '/v1/chat', { message: 'What was saved before the hang?' }],
      ];
      // More requests than the pool has open connections: some wait on a hung one, the others on a connect that never completes.
      const replies = await Promise.all([...during, ...during].map(([, method, path, body]) => timed(send(method, path, body))));
      replies.forEach(({ result, ms }, i) => {
        const [what, method, path] = during[i % during.length]!;
        expectUnavailable(result, `${what} (${method} ${path})`);
        expect(ms, `${what}: answered after ${ms} ms`).toBeLessThan(BOUND_MS + SLACK_MS);
      });
      // Still hung: the next request is bounded the same way, not stuck behind the ones that gave up.
      const again = await timed(send('GET', '/v1/memories?limit=1'));
      expectUnavailable(again.result, 'a request after the first ones timed out');
      expect(again.ms).toBeLessThan(BOUND_MS + SLACK_MS);

      proxy.resume();
      const started = Date.now();
      let res = await send('GET', '/v1/memories?limit=1');
      while (res.status !== 200 && Date.now() - started < 2 * BOUND_MS) {
        expectUnavailable(res, 'a request while the pool recovers');
        await new Promise((resolve) => setTimeout(resolve, 100));
        res = await send('GET', '/v1/memories?limit=1');
      }
      expect(res.status, `not serving ${Date.now() - started} ms after the database answered again`).toBe(200);

      // No connection left hung in the pool: a burst finds every one it takes working.
      const after = await Promise.all(
        Array.from({ length: 20 }, (_, i) => send('PUT', `/v1/memories/after-${i}`, { content: `Saved after the hang ${markerWord(50 + i)}` })),
      );
      expect(after.map((r) => r.status)).toEqual(Array(20).fill(201));
      for (const m of saved) {
        const stored = await send('GET', `/v1/memories/${m.key}`);
        expect(stored.status, m.key).toBe(200);
        expect(stored.body.memory.content).toBe(m.content);
      }
      const hits = (await send('POST', '/v1/memories/search', { query: markerWord(3), mode: 'text' })).body.hits as { memory: { key: string } }[];
      expect(hits.map((h) => h.memory.key)).toEqual([saved[3]!.key]);
    });

    it('a statement waiting on a lock past the timeout: 503 within the bound, cancelled by the server, and its connection serves on', async () => {
      expect((await send('PUT', '/v1/memories/locked', { content: 'the tenant has statistics to lock' })).status).toBe(201);
      const admin = new pg.Client({ connectionString: app!.databaseUrl });
      await admin.connect();
      try {
        // Another session holds the tenant's BM25 statistics, which every save locks first.
        await admin.query('BEGIN');
        await admin.query("SELECT * FROM memory_corpus_stats WHERE tenant_id = 'default' FOR UPDATE");
        const { result, ms } = await timed(send('PUT', '/v1/memories/waiting', { content: 'waits on the lock' }));
        expectUnavailable(result, 'a save waiting on a lock');
        expect(ms).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 50);
        // The server's cancellation (57014), not the client's give-up a grace later.
        expect(ms).toBeLessThan(STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_GRACE_MS);
        await admin.query('ROLLBACK');
      } finally {
        await admin.end();
      }
      expect((await send('PUT', '/v1/memories/waiting', { content: 'saved once the lock is free' })).status).toBe(201);
      expect((await send('GET', '/v1/memories/waiting')).body.memory.content).toBe('saved once the lock is free');
    });

    it('a statement timing out inside a transaction: its rollback fails at once, and the hung connection leaves the pool', async () => {
      const database = await openDatabase({
        url: proxy.proxiedUrl,
        poolSize: 1,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        statementTimeoutMs: STATEMENT_TIMEOUT_MS,
      });
      const pool = (database.db as unknown as { $client: pg.Pool }).$client;
      try {
        const started = Date.now();
        const failed = await database.db
          .transaction(async (tx) => {
            await tx.execute(sql`SELECT 1`);
            proxy.stall();
            await tx.execute(sql`SELECT 2`);
          })
          .then(
            () => undefined,
            (err: unknown) => err,
          );
        const ms = Date.now() - started;
        // The timeout, or the rollback that the dropped connection failed: either answers 503.
        expect(isDatabaseUnavailable(failed), String(failed)).toBe(true);
        // Kept, the connection would have gone back to the pool to hang the next request given it...
        expect(pool.totalCount).toBe(0);
        // ...after making ROLLBACK wait out a second timeout.
        expect(ms).toBeLessThan(STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_GRACE_MS + SLACK_MS);
      } finally {
        proxy.resume();
        await database.close();
      }
    });
  },
  { drivers: ['PostgreSQL server'] },
);
