import fc from 'fast-check';
import type { Hono } from 'hono';
import { inspectRoutes } from 'hono/dev';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AppContext } from '../../src/app-context.js';
import { isOpenAiCompatiblePath } from '../../src/http/openai-compatible/openai-error.js';
import { errorReplySchema } from '../../src/api/schemas/error-reply-schemas.js';
import { openAiErrorSchema } from '../../src/api/schemas/openai-schemas.js';
import { call, createApp, createTestContext } from '../http/http-test-context.js';
import { type DeclaredOperation, declaredOperations } from '../http/openapi/declared-operations.js';
import { assertProperty } from '../support/checked-property.js';
import { type FuzzRequest, fuzzRequests, multipartRequests, oddTextRequests } from './support/fuzz-requests.js';
import { createRequestOracle } from './support/request-oracle.js';
import { type FuzzSeeds, conversationExport, genericBase, knownBases } from './support/route-bases.js';
import { type TableFingerprint, createTableFingerprinter } from './support/table-fingerprint.js';

/**
 * Every route of the app, fuzzed: each request is a valid one with one to three parts broken
 * (see support/fuzz-requests.ts). Whatever comes in, the reply is never a 5xx; an error is the
 * JSON error body; a request the route's own schemas refuse is a 4xx; and a 4xx writes nothing
 * (every table's row count and row versions are compared before and after). Routes are read from
 * the app, so a route added later is fuzzed without editing this file.
 *
 * Bounded in time per route; FUZZ_SEED replays a run, FUZZ_RUNS and FUZZ_MS widen it. Each
 * property fails when no request of it was checked to the end (see test/support/checked-property.ts).
 */
const SEED = numberSetting('FUZZ_SEED', 60_006, Number.isSafeInteger);
const RUNS = numberSetting('FUZZ_RUNS', 200, (n) => Number.isSafeInteger(n) && n > 0);

/** A mistyped setting is an error: as NaN or 0 it would make every property run nothing. */
function numberSetting(name: string, fallback: number, valid: (n: number) => boolean): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!valid(value)) throw new Error(`${name}=${raw} is not a valid setting`);
  return value;
}

export interface FuzzTarget {
  ctx: AppContext;
  app: Hono;
  routes: { method: string; path: string }[];
  operations: DeclaredOperation[];
  fingerprint: () => Promise<TableFingerprint>;
  seeds: FuzzSeeds;
  release(): Promise<void>;
}

/**
 * The app over a database configured by `env`, seeded through its own API. Awaited while the
 * suite is collected, so that the routes are known when the tests are declared.
 */
export async function prepareFuzzTarget(env: Record<string, string>, release: () => Promise<void> = async () => {}): Promise<FuzzTarget> {
  // No workers: a job an accepted request queued would otherwise change the jobs table while a
  // later, refused request is checked for having written nothing.
  const ctx = await createTestContext({ WORKERS_IN_PROCESS: 'false', ...env });
  const app = createApp(ctx);
  const routes = inspectRoutes(app).filter((r) => !r.isMiddleware);
  const operations = declaredOperations(app);
  const fingerprint = await createTableFingerprinter(ctx.database.db);
  const memory = await call(app, 'PUT', '/v1/memories/seeded', { content: 'Alice prefers green tea', tags: ['alice'] });
  const document = await call(app, 'POST', '/v1/documents', {
    title: 'Tea',
    text: '# Tea\n\nGreen tea is steamed, black tea is oxidised.',
    format: 'markdown',
    tags: ['tea'],
  });
  const conversation = await call(app, 'POST', '/v1/conversations/import', conversationExport());
  const agent = await call(app, 'POST', '/v1/agents', { id: 'seeded-agent', name: 'Seeded agent' });
  for (const res of [memory, document, conversation, agent]) if (res.status !== 201) throw new Error(`seeding failed: ${JSON.stringify(res.body)}`);
  const seeds = { memoryKey: 'seeded', documentId: document.body.document.id, conversationId: conversation.body.conversation.id, agentId: 'seeded-agent' };
  return {
    ctx,
    app,
    routes,
    operations,
    fingerprint,
    seeds,
    async release() {
      await ctx.close();
      await release();
    },
  };
}

/**
 * Declared inside a driver's suite (see describeOnDrivers); releases `target` when done.
 * `msPerRoute`: the time each property of each route gets (FUZZ_MS overrides it).
 */
export function routeFuzzSuite(target: FuzzTarget, msPerRoute: number) {
  const MS_PER_ROUTE = numberSetting('FUZZ_MS', msPerRoute, (n) => Number.isFinite(n) && n > 0);
  const { ctx, app, routes, operations, fingerprint, seeds } = target;
  afterAll(async () => {
    await target.release();
  });
  const runParameters = { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: MS_PER_ROUTE, markInterruptAsFailure: false };

  function fail(req: FuzzRequest, why: string, status: number, text: string): never {
    throw new Error(`${req.method} ${req.url.slice(0, 300)}\n  mutations: ${req.mutations.join('; ')}\n  ${why}: ${status} ${text.slice(0, 600)}`);
  }

  describe('fuzzing every route', () => {
    it('finds the routes to fuzz', () => {
      expect(routes.length).toBeGreaterThan(20);
      expect(new Set(routes.map((r) => r.path))).toContain('/v1/memories/:key');
    });

    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      const base = knownBases(seeds)[key] ?? genericBase(route.method, route.path);
      const operation = operations.find((op) => op.method.toUpperCase() === route.method && op.path === route.path);
      const judge = createRequestOracle(route.method, route.path, operation);

      it(`${key}: broken requests`, async () => {
        const check = createChecker(judge);
        const { executed } = await assertProperty(fuzzRequests(route.method, route.path, base), check, runParameters);
        await check.drain();
        report(key, 'broken', check.counts, executed);
        // Known routes with inputs must have been sent requests they refuse, or the oracle is saying nothing.
        if (knownBases(seeds)[key] && operation && (operation.params || operation.query || operation.body)) expect(check.counts.mustReject).toBeGreaterThan(0);
      });

      const formSchema = operation?.body?.content['multipart/form-data'] as z.ZodObject | undefined;
      if (formSchema) {
        it(`${key}: multipart uploads`, async () => {
          const check = createChecker(judge);
          // Twice the time: parsing files (pdf.js above all) makes each request slower.
          const { executed } = await assertProperty(multipartRequests(route.method, route.path, Object.keys(formSchema.shape)), check, {
            ...runParameters,
            interruptAfterTimeLimit: 2 * MS_PER_ROUTE,
          });
          await check.drain();
          report(key, 'multipart', check.counts, executed);
        });
      }

      const odd = oddTextRequests(route.method, route.path, base);
      if (odd) {
        it(`${key}: odd text`, async () => {
          const check = createChecker(judge);
          const { executed } = await assertProperty(odd, check, runParameters);
          await check.drain();
          report(key, 'odd text', check.counts, executed);
        });
      }
    }
  });

  interface Counts {
    requests: number;
    mustReject: number;
    rejected: number;
    slowestMs: number;
    slowest: string;
  }

  function report(key: string, kind: string, c: Counts, executed: number) {
    if (process.env.FUZZ_REPORT)
      console.log(
        `${key} (${kind}): ${c.requests} requests (${executed} checked within the time limit), ${c.mustReject} invalid by its schemas, ${c.rejected} refused; slowest ${c.slowestMs} ms: ${c.slowest}`,
      );
  }

  /** The checks every fuzzed request is held to (see the file comment), counting what it saw. */
  function createChecker(judge: ReturnType<typeof createRequestOracle>) {
    const counts: Counts = { requests: 0, mustReject: 0, rejected: 0, slowestMs: 0, slowest: '' };
    const check = async (req: FuzzRequest) => {
      counts.requests += 1;
      // PGlite and app.request() resolve on microtasks alone: without a macrotask turn now and then,
      // the worker never reads vitest's RPC replies, and a long run dies of "Timeout calling onTaskUpdate".
      await new Promise((resolve) => setImmediate(resolve));
      // A blank body is no body, to the routes as to the oracle.
      const blank = req.body === undefined || (typeof req.body === 'string' && req.body.trim() === '');
      const verdict = await judge(req.url, blank ? 'none' : req.multipart ? 'opaque' : (req.json ?? { ok: false }));
      const mustReject = verdict.routed && verdict.invalid.length > 0;
      if (mustReject) counts.mustReject += 1;

      const before = await fingerprint();
      const started = performance.now();
      const res = await app.request(req.url, { method: req.method, headers: req.headers, ...(req.body === undefined ? {} : { body: req.body }) });
      const text = await res.text();
      const ms = performance.now() - started;
      if (ms > counts.slowestMs) Object.assign(counts, { slowestMs: Math.round(ms), slowest: `${res.status} ${fc.stringify(req)}`.slice(0, 300) });
      const type = res.headers.get('content-type') ?? '';
      // The one 5xx a route declares for this server's configuration (no LLM), not a failure of it.
      const unconfigured = res.status === 503 && /"code":"llm_not_configured"/.test(text);
      if (res.status >= 500 && !unconfigured) fail(req, 'a server error', res.status, text);
      if (type.startsWith('text/event-stream') && /"status":5\d\d/.test(text)) fail(req, 'a server error inside the event stream', res.status, text);
      if (res.status >= 400) {
        counts.rejected += 1;
        if (!type.startsWith('application/json')) fail(req, `an error that is not JSON (${type})`, res.status, text);
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          fail(req, 'an error body that does not parse', res.status, text);
        }
        if (isMcp(req.url)) {
          if (!jsonRpcErrorSchema.safeParse(body).success) fail(req, 'an MCP error body that is not a JSON-RPC error', res.status, text);
        } else if (isOpenAiCompatiblePath(new URL(req.url, 'http://x').pathname)) {
          if (!openAiErrorSchema.safeParse(body).success) fail(req, "an OpenAI-compatible route's error body not in OpenAI's shape", res.status, text);
        } else if (!errorReplySchema.safeParse(body).success) fail(req, 'an error body not of the {error:{code,message,details}} shape', res.status, text);
        const after = await fingerprint();
        if (JSON.stringify(after) !== JSON.stringify(before)) {
          fail(req, `a refused request that wrote (${JSON.stringify(before)} → ${JSON.stringify(after)})`, res.status, text);
        }
      } else {
        if (mustReject) fail(req, `accepted although its ${verdict.invalid.join(', ')} fails the route's schema`, res.status, text);
        // A chat reply schedules checkpoint writing; it must not land inside the next request's comparison.
        await ctx.backgroundTasks.whenIdle();
      }
    };
    // fast-check's interruptAfterTimeLimit abandons the run in progress rather than waiting for it:
    // its request would go on writing into the next test's comparisons, and a failure would be lost.
    const pending = new Set<Promise<void>>();
    let lateFailure: unknown;
    const tracked = (req: FuzzRequest) => {
      const run = check(req);
      const settled = run.then(
        () => {},
        (err: unknown) => {
          lateFailure ??= err;
        },
      );
      pending.add(settled);
      void settled.finally(() => pending.delete(settled));
      return run;
    };
    /** Waits for abandoned runs; throws what one of them found. */
    const drain = async () => {
      await Promise.all(pending);
      const found = lateFailure;
      lateFailure = undefined;
      if (found) throw found;
    };
    return Object.assign(tracked, { counts, drain });
  }
}

/** `/mcp` answers its transport's refusals (405, 406, 415, parse errors) as JSON-RPC errors: MCP clients read those. */
const jsonRpcErrorSchema = z.object({ jsonrpc: z.literal('2.0'), error: z.object({ code: z.number().int(), message: z.string() }), id: z.null() });

function isMcp(url: string): boolean {
  return new URL(url, 'http://localhost').pathname === '/mcp';
}
