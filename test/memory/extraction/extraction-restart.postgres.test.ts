import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FACT_EXTRACTION_INSTRUCTIONS, MEMORY_DECISION_INSTRUCTIONS } from '../../../src/memory/extraction/extraction-prompts.js';
import { type FakeEmbeddingsServer, startFakeEmbeddingsServer } from '../../../testkit/fake-embeddings-server.js';
import { type ScriptedLlmServer, type ScriptedRequest, reply, startScriptedLlmServer } from '../../../testkit/scripted-llm-server.js';
import { acquireRealPostgres, type RealPostgres, realPostgresSkipReason } from '../../support/real-postgres.js';
import { baseUrlOf, isListening, type SpawnedServer, send, spawnServer, stopServers, waitFor } from '../../support/spawned-server.js';

/**
 * A server killed (SIGKILL) while chat turns' extraction jobs are queued finishes them after a
 * restart. The first `src/main.ts` answers three chat turns and queues one extraction job each;
 * its model never answers a fact request, so its two job slots (JOB_CONCURRENCY=2) hang in the
 * model call, renewing their leases, and the third job stays queued. It is killed there. A second
 * server on the same database, with a model that answers, takes the queued job at once and the two
 * the dead one held once their lease (JOB_LEASE_MS) runs out: every job succeeds (the held ones at
 * their second attempt), none fails, and each turn's fact is a memory whose source names its
 * conversation, its turn and the user's words.
 *
 * Both servers embed with the OpenAI-compatible fake on 127.0.0.1 (no model to load), and talk to
 * scripted models on 127.0.0.1.
 */
const LEASE_MS = 1_500;
const USER = 'ada';
/** How long the first server's model takes over a fact request: far past the kill and the test. */
const STALL_MS = 45_000;

/** The three turns, the fact each gives and the user's words it is drawn from. */
const TURNS = [
  { message: 'I have played the cello since school.', fact: 'The user plays the cello.', quote: 'I have played the cello' },
  { message: 'My sister Ingrid lives in Tromso.', fact: "The user's sister Ingrid lives in Tromso.", quote: 'My sister Ingrid lives in Tromso.' },
  { message: 'We just moved to Gdansk, by the sea.', fact: 'The user lives in Gdansk.', quote: 'We just moved to Gdansk' },
];

const systemOf = (r: ScriptedRequest) => r.body.messages[0]?.content;
const isFacts = (r: ScriptedRequest) => systemOf(r) === FACT_EXTRACTION_INSTRUCTIONS;
/** The turn a fact request reads, by the user's words in its conversation block. */
const turnOf = (r: ScriptedRequest) => TURNS.find((t) => String(r.body.messages[1]?.content).includes(t.message));

const children: SpawnedServer[] = [];

/** `src/main.ts` as operators run it, on the test's database, answering on a port of its own. */
function startMain(name: string, env: Record<string, string>): SpawnedServer & { base: Promise<string> } {
  const started = spawnServer({ name, script: 'src/main.ts', env, ready: isListening });
  children.push(started);
  const base = started.ready.then(baseUrlOf);
  // Awaited by the test; a start that fails after the test stopped waiting is not an unhandled rejection.
  base.catch(() => {});
  return { ...started, base };
}

interface JobView {
  id: string;
  kind: string;
  status: string;
  attempt: number;
  result: Record<string, any> | null;
  error: { code: string; message: string } | null;
}

const extractionJobs = async (base: string): Promise<JobView[]> => {
  const res = await send(base, 'GET', '/v1/jobs?kind=extraction&limit=100');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items as JobView[];
};
const byStatus = (jobs: JobView[]) =>
  Object.fromEntries(['queued', 'running', 'succeeded', 'failed'].map((s) => [s, jobs.filter((j) => j.status === s).length]));

const skipReason = await realPostgresSkipReason();

describe('extraction jobs on the PostgreSQL server: a server killed with jobs queued finishes them after restart', () => {
  if (skipReason) {
    it.skip(`skipped: ${skipReason}`, () => {});
    return;
  }

  let database: RealPostgres;
  let embeddings: FakeEmbeddingsServer;
  /** The first server's model: answers the chat, never a fact request (before the kill). */
  let stalled: ScriptedLlmServer;
  /** The second server's model: answers the chat, the fact requests and the decisions. */
  let answering: ScriptedLlmServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    const acquired = await acquireRealPostgres();
    if ('skipReason' in acquired) throw new Error(acquired.skipReason);
    database = acquired;
    embeddings = await startFakeEmbeddingsServer();
    stalled = await startScriptedLlmServer((request) =>
      isFacts(request) ? reply.text('{"facts": []}', { delayMs: STALL_MS }) : reply.text('Noted, thank you.'),
    );
    answering = await startScriptedLlmServer((request) => {
      if (systemOf(request) === MEMORY_DECISION_INSTRUCTIONS) return reply.text('{"decisions": [{"fact": 0, "event": "ADD"}]}');
      if (!isFacts(request)) return reply.text('Noted, thank you.');
      const turn = turnOf(request);
      if (!turn) return reply.error(400, { message: 'scripted model: a fact request for no known turn' });
      return reply.text(JSON.stringify({ facts: [{ content: turn.fact, tags: ['profile'], quote: turn.quote }] }));
    });
    env = {
      DATABASE_URL: database.url,
      EMBEDDING_PROVIDER: 'openai',
      EMBEDDING_BASE_URL: embeddings.baseURL,
      EMBEDDING_API_KEY: 'test',
      LLM_API_KEY: 'test',
      LLM_MODEL: 'scripted',
      // One model request per attempt: the job runner does the retrying.
      LLM_MAX_ATTEMPTS: '1',
      MEMORY_EXTRACTION: 'on',
      MEMORY_EXTRACTION_TIMEOUT_MS: String(STALL_MS * 2),
      LLM_TIMEOUT_MS: String(STALL_MS * 2),
      WORKERS_IN_PROCESS: 'true',
      JOB_CONCURRENCY: '2',
      JOB_LEASE_MS: String(LEASE_MS),
      JOB_POLL_MS: '50',
      JOB_RETRY_BASE_MS: '50',
      JOB_MAX_ATTEMPTS: '3',
    };
  }, 60_000);

  afterAll(async () => {
    await stopServers(children);
    await stalled?.close().catch(() => {});
    await answering?.close().catch(() => {});
    await embeddings?.close().catch(() => {});
    await database?.release();
  }, 60_000);

  it('three turns queued, two jobs in the model call and one queued at the kill: all three succeed after restart, none fails, each a memory naming its turn', async () => {
    // --- The first server: three turns, their jobs stuck behind a model that does not answer.
    const first = startMain('server-1', { ...env, LLM_BASE_URL: stalled.url });
    const firstBase = await first.base;
    const turns: { conversationId: string; turn: number }[] = [];
    // Two turns in one conversation (turns 1 and 2), the third the first of a conversation of its own.
    for (const [i, t] of TURNS.entries()) {
      const conversationId = i === 1 ? turns[0]!.conversationId : undefined;
      const res = await send(firstBase, 'POST', '/v1/chat', { message: t.message, userId: USER, ...(conversationId ? { conversationId } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      turns.push({ conversationId: res.body.conversationId as string, turn: i === 1 ? 2 : 1 });
    }
    expect(turns[1]!.conversationId).toBe(turns[0]!.conversationId);
    expect(turns[2]!.conversationId).not.toBe(turns[0]!.conversationId);

    // The hook queues each job after its reply; both job slots then wait on the model, the third job on a slot.
    const before = await waitFor(
      'three extraction jobs, two of them in the model call and one queued',
      () => extractionJobs(firstBase),
      (jobs) => jobs.length === TURNS.length && byStatus(jobs).running === 2 && byStatus(jobs).queued === 1 && stalled.requests.filter(isFacts).length === 2,
      20_000,
    );
    expect(byStatus(before)).toEqual({ queued: 1, running: 2, succeeded: 0, failed: 0 });
    const heldIds = before.filter((j) => j.status === 'running').map((j) => j.id);
    const queuedIds = before.filter((j) => j.status === 'queued').map((j) => j.id);

    first.child.kill('SIGKILL');
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');
    // Its model calls died with it, unanswered.
    await waitFor(
      "the killed server's fact requests to be cut",
      async () => stalled.requests.filter(isFacts).map((r) => r.closedEarly),
      (cut) => cut.every(Boolean),
      5_000,
    );
    expect(first.lines.map((l) => l.msg)).not.toContain('shut down');

    // --- The second server, same database, a model that answers.
    const second = startMain('server-2', { ...env, LLM_BASE_URL: answering.url });
    const secondBase = await second.base;
    const after = await waitFor(
      'every extraction job to succeed after the restart (the held ones once their lease runs out)',
      () => extractionJobs(secondBase),
      (jobs) => jobs.length === TURNS.length && jobs.every((j) => ['succeeded', 'failed', 'cancelled'].includes(j.status)),
      30_000,
    );
    expect(after.filter((j) => j.status !== 'succeeded')).toEqual([]);
    expect(new Set(after.map((j) => j.id))).toEqual(new Set(before.map((j) => j.id)));
    for (const job of after) {
      expect(job).toMatchObject({ kind: 'extraction', status: 'succeeded', error: null, result: { facts: 1, applied: 1, skipped: 0, failures: 0 } });
      // Held by the dead server: its attempt 1 was lost, attempt 2 did it. Queued: done at the first attempt.
      if (heldIds.includes(job.id)) expect(job.attempt).toBe(2);
      if (queuedIds.includes(job.id)) expect(job.attempt).toBe(1);
    }
    expect((await send(secondBase, 'GET', '/v1/jobs?kind=extraction&status=failed')).body.items).toEqual([]);
    // One fact request per turn: no turn extracted twice, none left out.
    expect(
      answering.requests
        .filter(isFacts)
        .map((r) => turnOf(r)?.message)
        .sort(),
    ).toEqual(TURNS.map((t) => t.message).sort());

    // --- Each turn's fact is a memory of the user, its source naming its conversation, turn and words.
    const listed = await send(secondBase, 'GET', `/v1/memories?userId=${USER}&limit=100`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const memories = listed.body.items as { content: string; userId: string; sources: Record<string, any>[] }[];
    expect(memories.map((m) => m.content).sort()).toEqual(TURNS.map((t) => t.fact).sort());
    for (const [i, t] of TURNS.entries()) {
      const memory = memories.find((m) => m.content === t.fact)!;
      expect(memory.userId).toBe(USER);
      expect(memory.sources).toHaveLength(1);
      expect(memory.sources[0]).toMatchObject({
        actor: 'extraction',
        conversationId: turns[i]!.conversationId,
        turn: turns[i]!.turn,
        quote: { text: t.quote },
      });
      const { start, end } = memory.sources[0]!.quote as { start: number; end: number };
      expect(t.message.slice(start, end)).toBe(t.quote);
    }
  });
});
