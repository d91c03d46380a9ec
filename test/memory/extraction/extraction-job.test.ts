import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { Hono } from 'hono';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AppContext, createAppContext } from '../../../src/app-context.js';
import { loadConfig } from '../../../src/config/config.js';
import { queryRows } from '../../../src/db/query-rows.js';
import { describeError } from '../../../src/api/error-mapping.js';
import { createLlmProvider } from '../../../src/llm/llm-provider.js';
import { FACT_EXTRACTION_INSTRUCTIONS, MEMORY_DECISION_INSTRUCTIONS } from '../../../src/memory/extraction/extraction-prompts.js';
import { createHashEmbedder } from '../../../testkit/hash-embedder.js';
import { type ScriptedLlmServer, type ScriptedReply, type ScriptedRequest, reply, startScriptedLlmServer } from '../../../testkit/scripted-llm-server.js';
import { call, createApp } from '../../http/http-test-context.js';
import { type DatabaseDriver, describeOnDrivers } from '../../support/database-drivers.js';

const json = (value: unknown) => reply.text(JSON.stringify(value));
const isFacts = (r: ScriptedRequest) => r.body.messages[0]?.content === FACT_EXTRACTION_INSTRUCTIONS;
const factsFor = (city: string) => (r: ScriptedRequest) => isFacts(r) && String(r.body.messages[1]?.content).includes(city);

/**
 * A model whose fact request for a message naming a city answers what `plans[city]` says for that
 * attempt (1-based), or the fact that the user moved there; decisions are always ADD, and anything
 * else (the chat's reply, checkpoints) is a short answer.
 */
function cityModel(plans: Map<string, (attempt: number) => ScriptedReply | undefined>) {
  const attempts = new Map<string, number>();
  return (request: ScriptedRequest): ScriptedReply => {
    const system = request.body.messages[0]?.content;
    if (system === MEMORY_DECISION_INSTRUCTIONS) return json({ decisions: [{ fact: 0, event: 'ADD' }] });
    if (system !== FACT_EXTRACTION_INSTRUCTIONS) return reply.text('Nice, noted.');
    const city = /moved to (\w+)/.exec(String(request.body.messages[1]?.content))?.[1] ?? 'nowhere';
    const attempt = (attempts.get(city) ?? 0) + 1;
    attempts.set(city, attempt);
    return plans.get(city)?.(attempt) ?? json({ facts: [{ content: `The user lives in ${city}.`, quote: `moved to ${city}` }] });
  };
}

async function openContext(env: Record<string, string>, llm: ScriptedLlmServer, extra: Record<string, string> = {}): Promise<AppContext> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    MEMORY_EXTRACTION: 'on',
    JOB_POLL_MS: '20',
    JOB_RETRY_BASE_MS: '20',
    JOB_MAX_ATTEMPTS: '3',
    ...env,
    ...extra,
  });
  const provider = createLlmProvider({ baseURL: llm.url, apiKey: 'k', model: 'scripted', retry: { maxAttempts: 1 } });
  return createAppContext(config, { embedder: createHashEmbedder(64), llm: provider, describeError });
}

/** Chats as `userId`, and answers the extraction job the turn queued. */
async function chatAndFindJob(app: Hono, ctx: AppContext, userId: string, message: string): Promise<{ jobId: string; conversationId: string }> {
  const before = new Set((await call(app, 'GET', '/v1/jobs?kind=extraction&limit=100')).body.items.map((j: { id: string }) => j.id));
  const chat = await call(app, 'POST', '/v1/chat', { message, agentId: 'travel', userId });
  expect(chat.status).toBe(200);
  // The hook queues the job in the background, after the reply.
  await ctx.backgroundTasks.whenIdle();
  const listed = await call(app, 'GET', '/v1/jobs?kind=extraction&limit=100');
  const fresh = listed.body.items.filter((j: { id: string }) => !before.has(j.id));
  expect(fresh).toHaveLength(1);
  expect(fresh[0].kind).toBe('extraction');
  return { jobId: fresh[0].id, conversationId: chat.body.conversationId };
}

async function settled(app: Hono, id: string, ms = 15_000) {
  const until = Date.now() + ms;
  for (;;) {
    const res = await call(app, 'GET', `/v1/jobs/${id}`);
    if (['succeeded', 'failed', 'cancelled'].includes(res.body.job.status)) return res.body.job;
    if (Date.now() > until) throw new Error(`job ${id} still ${res.body.job.status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const memoriesOf = async (app: Hono, userId: string) => (await call(app, 'GET', `/v1/memories?agentId=travel&userId=${userId}`)).body.items;

describeOnDrivers('extraction jobs', (driver: DatabaseDriver) => {
  const plans = new Map<string, (attempt: number) => ScriptedReply | undefined>();
  let llm: ScriptedLlmServer;
  let release: () => Promise<void> = async () => {};
  let ctx: AppContext;
  let app: Hono;

  beforeAll(async () => {
    llm = await startScriptedLlmServer(cityModel(plans));
    const provisioned = await driver.provision();
    release = provisioned.release;
    ctx = await openContext(provisioned.env, llm);
    app = createApp(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
    await release();
    await llm?.close();
  });

  it('retries a model that fails (HTTP 500, then malformed JSON) and writes the memory at the third attempt, the job under its user', async () => {
    plans.set('Zanzibar', (attempt) =>
      attempt === 1 ? reply.error(500, { message: 'model down' }) : attempt === 2 ? reply.text('Sure! The user moved.') : undefined,
    );
    const message = 'Big news: we moved to Zanzibar in May.';
    const { jobId, conversationId } = await chatAndFindJob(app, ctx, 'zoe', message);
    const job = await settled(app, jobId);
    expect(job).toMatchObject({ kind: 'extraction', status: 'succeeded', attempt: 3, error: null, result: { facts: 1, applied: 1, skipped: 0, failures: 0 } });
    expect(llm.requests.filter(factsFor('Zanzibar'))).toHaveLength(3);

    const [memory] = await memoriesOf(app, 'zoe');
    expect(memory).toMatchObject({ content: 'The user lives in Zanzibar.', userId: 'zoe', key: job.result.keys[0] });
    // The origin names the turn and the user's words, sliced from the user's message.
    const stored = await ctx.memories.forTenant('default').get(memory.key, { agentId: 'travel', userId: 'zoe' });
    expect(stored!.sources[0]).toMatchObject({ actor: 'extraction', conversationId, turn: 1, quote: { text: 'moved to Zanzibar' } });
    const { quote } = stored!.sources[0]!;
    expect(message.slice(quote!.start, quote!.end)).toBe(quote!.text);

    // Erasing a user erases the jobs that carry their words.
    const [row] = await queryRows<{ user_id: string }>(ctx.database.db, sql`SELECT user_id FROM jobs WHERE id = ${jobId}`);
    expect(row!.user_id).toBe('zoe');
  });

  it('fails a job whose model fails every attempt, lists it by kind and status, and runs it again on retry', async () => {
    let down = true;
    plans.set('Reykjavik', () => (down ? reply.error(503, { message: 'still down' }) : undefined));
    const { jobId } = await chatAndFindJob(app, ctx, 'rey', 'We moved to Reykjavik last week.');
    const failed = await settled(app, jobId);
    expect(failed).toMatchObject({ status: 'failed', attempt: 3, error: { code: 'transient' } });
    expect(failed.error.message).toContain('llm_error');
    expect(await memoriesOf(app, 'rey')).toEqual([]);

    const listed = await call(app, 'GET', '/v1/jobs?kind=extraction&status=failed');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((j: { id: string }) => j.id)).toContain(jobId);
    expect(listed.body.items.every((j: { kind: string; status: string }) => j.kind === 'extraction' && j.status === 'failed')).toBe(true);
    expect((await call(app, 'GET', '/v1/jobs?kind=extraction&status=succeeded')).body.items.map((j: { id: string }) => j.id)).not.toContain(jobId);

    down = false;
    const retried = await call(app, 'POST', `/v1/jobs/${jobId}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body.job).toMatchObject({ id: jobId, status: 'queued', attempt: 0, finishedAt: null });
    expect(await settled(app, jobId)).toMatchObject({ status: 'succeeded', attempt: 1, error: null, result: { applied: 1 } });
    expect((await memoriesOf(app, 'rey')).map((m: { content: string }) => m.content)).toEqual(['The user lives in Reykjavik.']);

    const again = await call(app, 'POST', `/v1/jobs/${jobId}/retry`);
    expect(again).toMatchObject({ status: 409, body: { error: { code: 'job_not_failed' } } });
  });

  it('writes nothing for a job cancelled while the model was answering', async () => {
    // The fact reply comes 600 ms after it is asked for: time enough to cancel the job.
    plans.set('Oslo', (attempt) =>
      attempt === 1 ? reply.text(JSON.stringify({ facts: [{ content: 'The user lives in Oslo.' }] }), { delayMs: 600 }) : undefined,
    );
    const { jobId } = await chatAndFindJob(app, ctx, 'ola', 'We moved to Oslo, finally.');
    const until = Date.now() + 10_000;
    while (!llm.requests.some(factsFor('Oslo')) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    const cancel = await call(app, 'POST', `/v1/jobs/${jobId}/cancel`);
    expect(cancel).toMatchObject({ status: 200, body: { job: { status: 'cancelled' } } });
    // The model answered the facts and the decisions; the worker found the job gone before writing.
    const decidedOslo = (r: ScriptedRequest) =>
      r.body.messages[0]?.content === MEMORY_DECISION_INSTRUCTIONS && String(r.body.messages[1]?.content).includes('Oslo');
    while (!llm.requests.some(decidedOslo) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(llm.requests.some(decidedOslo)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(await memoriesOf(app, 'ola')).toEqual([]);
    expect((await call(app, 'GET', `/v1/jobs/${jobId}`)).body.job).toMatchObject({ status: 'cancelled', result: null });
  });

  it('writes nothing for a job whose conversation was deleted while the model was answering', async () => {
    plans.set('Tromso', (attempt) =>
      attempt === 1 ? reply.text(JSON.stringify({ facts: [{ content: 'The user lives in Tromso.' }] }), { delayMs: 600 }) : undefined,
    );
    const { jobId, conversationId } = await chatAndFindJob(app, ctx, 'tor', 'We moved to Tromso this winter.');
    const until = Date.now() + 10_000;
    while (!llm.requests.some(factsFor('Tromso')) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect((await call(app, 'DELETE', `/v1/conversations/${conversationId}?agentId=travel&cascade=memories`)).status).toBe(204);
    expect(await settled(app, jobId)).toMatchObject({ status: 'succeeded', result: { applied: 0, conversationDeleted: true } });
    // Its words went with the conversation: no memory quotes them afterwards.
    expect(await memoriesOf(app, 'tor')).toEqual([]);
  });

  it('finishes the extraction jobs queued or running when the server closed, once it is opened again on the same database', async () => {
    // PGlite's in a directory, not in memory: the database outlives the context that opens it.
    const dataDir = mkdtempSync(join(tmpdir(), 'memrag-extraction-jobs-'));
    const prepared = driver.name === 'PGlite' ? { env: { DATA_DIR: dataDir }, release: async () => {} } : await driver.provision();
    const restartPlans = new Map<string, (attempt: number) => ScriptedReply | undefined>();
    // Tromso's first fact request hangs until the server closes under it; Kyoto's waits behind it (one worker).
    restartPlans.set('Tromso', (attempt) => (attempt === 1 ? reply.text('{"facts": []}', { delayMs: 30_000 }) : undefined));
    const model = await startScriptedLlmServer(cityModel(restartPlans));
    let first: AppContext | undefined;
    let second: AppContext | undefined;
    try {
      first = await openContext(prepared.env, model, { JOB_CONCURRENCY: '1' });
      const firstApp = createApp(first);
      const tromso = await chatAndFindJob(firstApp, first, 'tor', 'We moved to Tromso for the lights.');
      const kyoto = await chatAndFindJob(firstApp, first, 'kei', 'We moved to Kyoto in spring.');
      const until = Date.now() + 10_000;
      while (!model.requests.some(factsFor('Tromso')) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect((await call(firstApp, 'GET', `/v1/jobs/${tromso.jobId}`)).body.job.status).toBe('running');
      expect((await call(firstApp, 'GET', `/v1/jobs/${kyoto.jobId}`)).body.job.status).toBe('queued');
      await first.close();
      first = undefined;
      // The hanging request was given up at shutdown, not answered.
      const hung = model.requests.find(factsFor('Tromso'))!;
      for (let i = 0; i < 100 && !hung.closedEarly; i++) await new Promise((r) => setTimeout(r, 20));
      expect(hung.closedEarly).toBe(true);

      second = await openContext(prepared.env, model);
      const secondApp = createApp(second);
      expect(await settled(secondApp, tromso.jobId)).toMatchObject({ status: 'succeeded', attempt: 1, result: { applied: 1 } });
      expect(await settled(secondApp, kyoto.jobId)).toMatchObject({ status: 'succeeded', attempt: 1, result: { applied: 1 } });
      expect((await memoriesOf(secondApp, 'tor')).map((m: { content: string }) => m.content)).toEqual(['The user lives in Tromso.']);
      expect((await memoriesOf(secondApp, 'kei')).map((m: { content: string }) => m.content)).toEqual(['The user lives in Kyoto.']);
    } finally {
      await first?.close();
      await second?.close();
      await prepared.release();
      rmSync(dataDir, { recursive: true, force: true });
      await model.close();
    }
  });
});
