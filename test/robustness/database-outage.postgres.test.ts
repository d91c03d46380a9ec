import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AppContext } from '../../src/app-context.js';
import { describeOnDrivers } from '../support/database-drivers.js';
import { type AppBehindRelay, expectUnavailable, startAppBehindRelay } from './support/app-behind-relay.js';
import type { CutMode, CuttableProxy } from './support/cuttable-tcp-proxy.js';
import type { ListeningServer } from './support/listening-server.js';
import { markerWord } from './support/marker-word.js';

/**
 * The database stops while the server runs: requests answer 503 `database_unavailable` (JSON,
 * with Retry-After), /readyz says not ready, and once the database is back the server serves
 * again by itself, with every write it acknowledged still there. The shared PostgreSQL server is
 * never stopped: the app reaches its database through a TCP relay that the test cuts.
 */
const CONNECT_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 3_000;

describeOnDrivers(
  'the database stops mid-run, reached through a cuttable relay',
  (driver) => {
    let app: AppBehindRelay | undefined;
    let databaseUrl: string;
    let proxy: CuttableProxy;
    let ctx: AppContext;
    let http: ListeningServer;

    beforeAll(async () => {
      app = await startAppBehindRelay(driver, { DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS), REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) });
      ({ databaseUrl, proxy, ctx, http } = app);
    });
    afterAll(() => app?.close());

    const send = (method: string, path: string, body?: unknown) => http.send(method, path, body);

    /** Polls until the server serves again; the time it took. */
    async function waitForRecovery(timeoutMs = 15_000): Promise<number> {
      const started = Date.now();
      for (;;) {
        const res = await send('GET', '/v1/memories?limit=1');
        if (res.status === 200) return Date.now() - started;
        expect(res.status, JSON.stringify(res.body)).toBe(503);
        if (Date.now() - started > timeoutMs) throw new Error(`not recovered within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }

    async function expectMemory(key: string, content: string) {
      const res = await send('GET', `/v1/memories/${encodeURIComponent(key)}`);
      expect(res.status, `${key}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.memory.content).toBe(content);
    }

    it.each<CutMode>(['refuse', 'reset', 'blackhole'])(
      'database down (%s): every route answers 503 with Retry-After, /readyz 503, then recovery with nothing acknowledged lost',
      async (mode) => {
        // Marker words of their own per test: the database is shared by the whole file.
        const marker = (i: number) => markerWord(['refuse', 'reset', 'blackhole'].indexOf(mode) * 20 + i);
        const acknowledged = Array.from({ length: 10 }, (_, i) => ({ key: `ack-${mode}-${i}`, content: `Acknowledged ${mode} note ${marker(i)}` }));
        for (const m of acknowledged) expect((await send('PUT', `/v1/memories/${m.key}`, { content: m.content })).status).toBe(201);
        const doc = await send('POST', '/v1/documents', { title: `Before ${mode}`, text: `Ingested before the ${mode} outage: ${marker(19)} ${mode}.` });
        expect(doc.status).toBe(201);
        const documentId = doc.body.document.id as string;

        await proxy.cut(mode);
        const during: [string, string, string, unknown?][] = [
          ['save', 'PUT', `/v1/memories/down-${mode}`, { content: 'written while down' }],
          ['save by POST', 'POST', '/v1/memories', { key: `down-post-${mode}`, content: 'written while down' }],
          ['read', 'GET', `/v1/memories/${acknowledged[0]!.key}`],
          ['list', 'GET', '/v1/memories'],
          ['tags', 'GET', '/v1/tags'],
          ['memory search', 'POST', '/v1/memories/search', { query: 'acknowledged note' }],
          ['delete', 'DELETE', `/v1/memories/${acknowledged[1]!.key}`],
          ['ingest', 'POST', '/v1/documents', { text: `Written during the ${mode} outage.` }],
          ['document', 'GET', `/v1/documents/${documentId}`],
          ['chunks', 'GET', `/v1/documents/${documentId}/chunks`],
          ['knowledge search', 'POST', '/v1/search', { query: 'outage' }],
          ['conversations', 'GET', '/v1/conversations'],
          ['chat', 'POST', '/v1/chat', { message: 'What was acknowledged?' }],
        ];
        const replies = await Promise.all(during.map(([, method, path, body]) => send(method, path, body)));
        replies.forEach((res, i) => expectUnavailable(res, `${during[i]![0]} (${during[i]![1]} ${during[i]![2]})`));

        // A streamed chat has sent its headers before it meets the database: the 503 is in its error event.
        const streamed = await fetch(`${http.base}/v1/chat`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ message: 'What was acknowledged?', stream: true }),
        });
        const events = await streamed.text();
        if (streamed.status === 200) {
          expect(events).toMatch(/event: error\ndata: .*"status":503.*"database_unavailable"/);
        } else expect(streamed.status).toBe(503);

        const ready = await send('GET', '/readyz');
        if (ready.status !== 404) {
          expect(ready.status).toBe(503);
          expect(ready.body.error.code).toBe('not_ready');
        }
        expect((await send('GET', '/healthz')).status).toBe(200);

        await proxy.restore();
        await waitForRecovery();
        if (ready.status !== 404) expect((await send('GET', '/readyz')).status).toBe(200);

        for (const m of acknowledged) await expectMemory(m.key, m.content);
        const hits = (await send('POST', '/v1/memories/search', { query: marker(3), mode: 'text' })).body.hits as { memory: { key: string } }[];
        expect(hits.map((h) => h.memory.key)).toEqual([acknowledged[3]!.key]);
        const document = await send('GET', `/v1/documents/${documentId}`);
        expect(document.status).toBe(200);
        expect((await send('GET', `/v1/documents/${documentId}/chunks`)).body.items).toHaveLength(document.body.document.chunkCount);
        // The refused delete did not happen.
        await expectMemory(acknowledged[1]!.key, acknowledged[1]!.content);
        expect((await send('PUT', `/v1/memories/after-${mode}`, { content: 'written after recovery' })).status).toBe(201);
      },
    );

    it('a cut in the middle of a burst of writes: each answers 2xx or 503, and every acknowledged one survives, postings included', async () => {
      const writers = 60;
      const marker = (i: number) => markerWord(100 + i);
      const contentOf = (i: number) => `Burst note ${marker(i)} written in parallel`;
      let acknowledgedSoFar = 0;
      let cutting: Promise<void> | undefined;
      const cutAfter = 5;
      const replies = await Promise.all(
        Array.from({ length: writers }, async (_, i) => {
          const res = await send('PUT', `/v1/memories/burst-${i}`, { content: contentOf(i) });
          // Cut once a few are through: the rest are queued on the pool, in transactions, or on the wire.
          if (res.status < 300 && ++acknowledgedSoFar === cutAfter) {
            cutting = proxy
              .cut('reset')
              .then(() => new Promise((resolve) => setTimeout(resolve, 300)))
              .then(() => proxy.restore());
          }
          return res;
        }),
      );
      await cutting;
      const statuses = replies.map((r) => r.status);
      expect(
        statuses.filter((s) => s !== 201 && s !== 503),
        JSON.stringify(replies.find((r) => r.status !== 201 && r.status !== 503)?.body),
      ).toEqual([]);
      expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(cutAfter);
      expect(statuses.filter((s) => s === 503).length, 'the cut reached requests in flight').toBeGreaterThan(0);
      for (const res of replies.filter((r) => r.status === 503)) expectUnavailable(res, 'a write cut short');

      await waitForRecovery();
      for (let i = 0; i < writers; i++) {
        const stored = await send('GET', `/v1/memories/burst-${i}`);
        const hits = ((await send('POST', '/v1/memories/search', { query: marker(i), mode: 'text' })).body.hits as { memory: { key: string } }[]).map(
          (h) => h.memory.key,
        );
        if (statuses[i] === 201) {
          expect(stored.status, `acknowledged burst-${i}`).toBe(200);
          expect(stored.body.memory.content).toBe(contentOf(i));
        }
        // A 503'd write may or may not have committed; either way the memory and its postings agree.
        if (stored.status === 200) expect(hits, `postings of burst-${i}`).toEqual([`burst-${i}`]);
        else {
          expect(stored.status).toBe(404);
          expect(hits, `postings of the missing burst-${i}`).toEqual([]);
        }
      }
    });

    it('an administrator terminating the server connections (57P01) mid-run: 503s at most, then service without a restart', async () => {
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      try {
        const replies = Promise.all(
          Array.from({ length: 30 }, (_, i) => send('PUT', `/v1/memories/admin-${i}`, { content: `Admin note ${markerWord(200 + i)}` })),
        );
        await new Promise((resolve) => setTimeout(resolve, 30));
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
        const statuses = (await replies).map((r) => r.status);
        expect(statuses.filter((s) => s !== 201 && s !== 503)).toEqual([]);
        await waitForRecovery();
        for (const [i, s] of statuses.entries()) if (s === 201) await expectMemory(`admin-${i}`, `Admin note ${markerWord(200 + i)}`);
      } finally {
        await admin.end();
      }
    });

    it("a connection dying while a request held it crashed the process: 'error' on a checked-out pg client had no listener", async () => {
      const uncaught: unknown[] = [];
      const record = (err: unknown) => uncaught.push(err);
      process.prependListener('uncaughtException', record);
      try {
        await Promise.all(Array.from({ length: 10 }, (_, i) => send('PUT', `/v1/memories/held-${i}`, { content: `Held note ${markerWord(400 + i)}` })));
        // Requests hold their connections (inside transactions, waiting on the BM25 lock) when they die.
        proxy.stall();
        const held = Promise.all(Array.from({ length: 10 }, (_, i) => send('DELETE', `/v1/memories/held-${i}`)));
        await new Promise((resolve) => setTimeout(resolve, 300));
        await proxy.cut('reset');
        for (const res of await held) expectUnavailable(res, 'a request whose connection died');
        await proxy.restore();
        await waitForRecovery();
        expect(uncaught).toEqual([]);
        expect((await send('GET', '/healthz')).status).toBe(200);
      } finally {
        process.off('uncaughtException', record);
      }
    });

    it('connections whose transaction BEGIN failed leaked from the pool until it ran dry, for good (drizzle-orm#6241)', async () => {
      // Every pool connection open and idle: parallel saves each hold one while they queue on the BM25 lock.
      const warm = await Promise.all(
        Array.from({ length: 20 }, (_, i) => send('PUT', `/v1/memories/warm-${i}`, { content: `Warm note ${markerWord(300 + i)}` })),
      );
      expect(warm.map((r) => r.status).filter((s) => s !== 201)).toEqual([]);
      // The database hangs: each delete (a transaction from its first statement) takes an idle
      // connection and sends BEGIN, which waits...
      proxy.stall();
      const stuck = Promise.all(Array.from({ length: 10 }, (_, i) => send('DELETE', `/v1/memories/warm-${i}`)));
      await new Promise((resolve) => setTimeout(resolve, 300));
      // ...and then the connections die, failing every BEGIN.
      await proxy.cut('reset');
      for (const res of await stuck) expectUnavailable(res, 'a delete whose BEGIN failed');
      await proxy.restore();
      // With the leak, the pool had no connection left to give, and answered 503 forever.
      await waitForRecovery(5 * CONNECT_TIMEOUT_MS);
      const after = await Promise.all(Array.from({ length: 10 }, (_, i) => send('PUT', `/v1/memories/after-leak-${i}`, { content: 'written once recovered' })));
      expect(after.map((r) => r.status)).toEqual(Array(10).fill(201));
      // The refused deletes did not happen.
      for (let i = 0; i < 10; i++) await expectMemory(`warm-${i}`, `Warm note ${markerWord(300 + i)}`);
    });

    it('a database that hangs (connections open, no answer): 504 request_timeout at REQUEST_TIMEOUT_MS, then service once the connections are cut', async () => {
      expect((await send('GET', '/v1/memories?limit=1')).status).toBe(200);
      // The statement timeout (15 s by default) is longer than this request timeout, which answers
      // first; hung-database.postgres.test.ts has it the other way round.
      proxy.stall();
      const started = Date.now();
      const hung = await Promise.all([send('GET', '/v1/memories?limit=1'), send('PUT', '/v1/memories/hung', { content: 'sent into a hung database' })]);
      // A request on a pooled connection waits out the request timeout; one that needs a new
      // connection (the pool kept fewer idle than asked for) meets the connect timeout first.
      expect(hung.some((res) => res.status === 504)).toBe(true);
      for (const res of hung) {
        if (res.status === 503) expectUnavailable(res, 'a request needing a new connection');
        else expect(res.body.error, JSON.stringify(res.body)).toMatchObject({ code: 'request_timeout' });
      }
      expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS + 2_000);
      // Their queries still hold connections until the statement timeout gives up on them; the cut
      // stands for that here.
      await proxy.cut('reset');
      await proxy.restore();
      await waitForRecovery();
    });

    it('a pool with every connection busy answers 503 after DATABASE_CONNECT_TIMEOUT_MS instead of queueing without end', async () => {
      // The pool's 10 connections, each held by a query that sleeps past the connect timeout.
      const holders = Promise.all(Array.from({ length: 10 }, () => ctx.database.db.execute(sql`SELECT pg_sleep(${(3 * CONNECT_TIMEOUT_MS) / 1000})`))).catch(
        (err: unknown) => {
          throw new Error(`holding the pool's connections failed: ${String((err as Error).cause ?? err)}`);
        },
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      expectUnavailable(await send('GET', '/v1/memories'), 'a request finding no free connection');
      expect(Date.now() - started).toBeLessThan(3 * CONNECT_TIMEOUT_MS);
      await holders;
      expect((await send('GET', '/v1/memories')).status).toBe(200);
    });
  },
  { drivers: ['PostgreSQL server'] },
);
