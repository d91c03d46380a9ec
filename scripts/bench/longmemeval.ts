/**
 * Episodic recall on LongMemEval_S's tuning part (../shared/datasets/longmemeval-s): each
 * question's ~48 sessions are imported through the HTTP API as conversations of a user of their
 * own (the question id), all questions into one tenant, then the question is asked through
 * `POST /v1/turns/search` for that user with `asOf` = the question's date, in each mode. Printed per
 * question type: session recall_all@5/@10 (every answer session among the first k distinct
 * conversations of the turn list), session recall_any@5 (one of them among the first 5) and turn
 * recall_all@10 (every turn holding a `has_answer` message among the first 10), beside two
 * in-script BM25s: over the same turns keyed by the user's messages (the paper's baseline) and over
 * whole sessions; then hybrid against the better of them per type (the floor), import turns/s
 * beside the embedder alone on the same texts (BENCH_EMBED_TURNS of them, default 1,000), and
 * search p50/p95.
 *
 *   npm run bench:longmemeval
 *   BENCH_QUESTIONS=30 npm run bench:longmemeval              # the first 30 (every type still present)
 *   BENCH_QUESTION_IDS=75832dbd,gpt4_d31cdae3 …               # only these questions (with BENCH_MISSES, one question's story)
 *   BENCH_DRIVER=pg BENCH_DATABASE_URL=postgres://… npm run bench:longmemeval
 *   BENCH_DRIVER=pg BENCH_REUSE=1 …                           # keep the imported database; search it again
 *   BENCH_DATA_DIR=/tmp/lme-pglite …                          # PGlite in that folder, kept: a second run searches it again
 *   BENCH_MISSES=1 …                                         # where a missed question's evidence turns and sessions ranked
 *   BENCH_ASOF=0 BENCH_BY_CONVERSATION=0 …                    # without asOf and groupBy (a server before them)
 *   BENCH_SEARCH='{"weights":{"vector":1,"text":2,"k":60}}' … # extra fields for every search (tuning)
 *   BENCH_TUNE='{"conversationDecay":[1,0.9],"timeWindowBoost":[0,0.5]}' … # a grid of re-ranking options (library, hybrid)
 *   BENCH_TUNE='{"conversationVector":[1,2],"conversationK":[10,20]}' …  # sessions as groupBy "conversation" ranks them
 *   BENCH_TUNE='{"feedbackTurns":[0,10],"feedbackWeight":[1,3]}' …       # the vector side's feedback (vector-feedback.ts)
 *   BENCH_TUNE='{"priorFeedbackWeight":[0,3],"priorVector":[1,2]}' …     # the conversations' ranking the turn list's prior reads
 *
 * `asOf` is the end of the question's day: the release dates 181 sessions later on the day the
 * question is asked (8 of them answer sessions), though they come before it in the haystack.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { queryRows } from '../../src/db/query-rows.js';
import { CONVERSATION_FUSION_WEIGHTS, type RankableTurn, rankConversations } from '../../src/conversations/conversation-ranking.js';
import { CONVERSATION_VECTOR_FEEDBACK } from '../../src/conversations/vector-feedback.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { splitIntoBatches } from '../../src/embeddings/split-into-batches.js';
import { turnEmbeddedText, turnRecords } from '../../src/conversations/turn-record.js';
import { InMemoryBm25Index } from '../../src/retrieval/bm25/bm25.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';
import { listenOnLoopback } from './lib/listening-app.js';
import { type LongMemEvalQuestion, type SessionTurn, longMemEvalDate, readLongMemEval, sessionTurns } from './lib/longmemeval.js';
import { BM25_RETRIEVERS, type Recall, printAgainstWords, printRecall } from './lib/longmemeval-recall.js';

const DRIVER = process.env.BENCH_DRIVER ?? 'pglite';
const LIMIT = process.env.BENCH_QUESTIONS ? Number(process.env.BENCH_QUESTIONS) : Infinity;
const QUESTION_IDS = process.env.BENCH_QUESTION_IDS ? new Set(process.env.BENCH_QUESTION_IDS.split(',')) : undefined;
const REUSE = process.env.BENCH_REUSE === '1';
const EXTRA = process.env.BENCH_SEARCH ? (JSON.parse(process.env.BENCH_SEARCH) as Record<string, unknown>) : {};
const IMPORT_CONCURRENCY = Number(process.env.BENCH_IMPORT_CONCURRENCY ?? 2);
// Turns the embedder alone embeds before the import, as its rate's anchor (0: none).
const EMBED_ANCHOR_TURNS = Number(process.env.BENCH_EMBED_TURNS ?? 1_000);
const AS_OF = process.env.BENCH_ASOF !== '0';
// Also ask each question with groupBy "conversation" (hybrid): sessions as that ranks them. Off for a server before it.
const BY_CONVERSATION = process.env.BENCH_BY_CONVERSATION !== '0';
// A grid of the re-ranking options, searched through the library in hybrid mode (tuning): e.g.
// {"conversationDecay":[1,0.9,0.8],"timeWindowBoost":[0,0.5,1],"vector":[0.3,1],"k":[20,60]}
const TUNE = process.env.BENCH_TUNE ? (JSON.parse(process.env.BENCH_TUNE) as Record<string, number[]>) : undefined;
const MODES = (process.env.BENCH_MODES ?? 'hybrid,vector,text').split(',') as ('hybrid' | 'vector' | 'text')[];
// For each question a mode missed (turn R_all@10 or session R_all@5): where its evidence ranked.
const MISSES = process.env.BENCH_MISSES === '1';
const AGENT = 'lme';
const TOP_K = 50;
type Retriever = (typeof MODES)[number] | 'by conversation' | 'bm25 turns' | 'bm25 sessions';

interface Hit {
  conversationId: string;
  turn: number;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/** The round-robin order of a list: every question's types stay present when BENCH_QUESTIONS cuts it. */
function interleaveByType(questions: LongMemEvalQuestion[]): LongMemEvalQuestion[] {
  const byType = new Map<string, LongMemEvalQuestion[]>();
  for (const q of questions) (byType.get(q.question_type) ?? byType.set(q.question_type, []).get(q.question_type)!).push(q);
  const out: LongMemEvalQuestion[] = [];
  for (let i = 0; out.length < questions.length; i++) for (const list of byType.values()) if (list[i]) out.push(list[i]!);
  return out;
}

function exportOf(sessionId: string, date: string) {
  return (turns: SessionTurn[]) => {
    const start = longMemEvalDate(date).getTime();
    let seq = 0;
    const messages = turns.flatMap((t, i) => {
      const at = new Date(start + i * 60_000).toISOString();
      // The assistant's opening (the first turn without a question) is imported as it is.
      const opening = i === 0 && t.question === '';
      return [
        ...(opening ? [] : [{ seq: ++seq, turn: i + 1, role: 'user' as const, content: t.question, createdAt: at }]),
        ...t.answers.map((content) => ({ seq: ++seq, turn: i + 1, role: 'assistant' as const, content, createdAt: at })),
      ];
    });
    const createdAt = new Date(start).toISOString();
    return {
      format: 'memrag.conversation',
      version: 1,
      conversation: { id: randomUUID(), agentId: AGENT, title: sessionId, createdAt, updatedAt: createdAt },
      messages,
      checkpoints: [],
      summary: null,
    };
  };
}

/**
 * This process's CPU time since `since` (every thread: the server's, the embedder's workers, the
 * database when embedded) per wall second. Where the embedder alone already keeps every core busy,
 * the import can reach its rate only by embedding more cheaply: its own work comes out of the same cores.
 */
function coresBusy(since: NodeJS.CpuUsage, ms: number): string {
  const cpu = process.cpuUsage(since);
  return ((cpu.user + cpu.system) / 1000 / ms).toFixed(2);
}

/**
 * The anchor of the import's rate: the embedder alone on the texts the import embeds (the first
 * EMBED_ANCHOR_TURNS turns' `turnEmbeddedText`), a session per call and IMPORT_CONCURRENCY calls at
 * once, as the import asks for them; then in calls of 32.
 */
async function embedderAlone(embedder: Embedder, bodies: ReturnType<ReturnType<typeof exportOf>>[]) {
  const sessions: string[][] = [];
  let count = 0;
  for (const body of bodies) {
    if (count >= EMBED_ANCHOR_TURNS) break;
    const records = turnRecords(body.messages.map((m) => ({ turn: m.turn, role: m.role, content: m.content, createdAt: new Date(m.createdAt) })));
    sessions.push(records.map(turnEmbeddedText));
    count += records.length;
  }
  const rate = async (calls: string[][], concurrency: number) => {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        // `bulk`, as the import's turns are embedded (turn-index.ts): the pool may start its idle workers.
        while (next < calls.length) await embedder.embed(calls[next++]!, { bulk: true });
      }),
    );
    const ms = performance.now() - t0;
    return `${((count * 1000) / ms).toFixed(1)} turns/s (${coresBusy(cpu0, ms)} cores busy)`;
  };
  const all = sessions.flat();
  const bySession = await rate(sessions, IMPORT_CONCURRENCY);
  const inThirtyTwos = await rate(splitIntoBatches(all, 32), IMPORT_CONCURRENCY);
  console.log(
    `the embedder alone on the first ${count} turns' texts: ${bySession} a session per call, ${inThirtyTwos} in calls of 32 (${IMPORT_CONCURRENCY} at once)`,
  );
}

/** One line per question missed at turn R_all@10 or session R_all@5: each evidence turn's rank (1-based; - beyond topK), each answer session's. */
function printMiss(mode: string, q: LongMemEvalQuestion, evidence: string[], answerSessions: string[], hits: Hit[]) {
  const ranks = evidence.map((e) => hits.findIndex((h) => `${h.conversationId}#${h.turn}` === e) + 1);
  const sessions = [...new Set(hits.map((h) => h.conversationId))];
  const sessionRanks = answerSessions.map((s) => sessions.indexOf(s) + 1);
  if (ranks.every((r) => r >= 1 && r <= 10) && sessionRanks.every((r) => r >= 1 && r <= 5)) return;
  const show = (r: number) => (r === 0 ? '-' : String(r));
  console.log(
    `miss ${mode.padEnd(6)} ${q.question_type.padEnd(26)} turns ${ranks.map(show).join(',').padEnd(14)} sessions ${sessionRanks.map(show).join(',').padEnd(12)} ${q.question}`,
  );
}

async function main() {
  const questions = interleaveByType(readLongMemEval().filter((q) => !QUESTION_IDS || QUESTION_IDS.has(q.question_id))).slice(0, LIMIT);
  if (questions.length === 0) throw new Error(`no question matches BENCH_QUESTION_IDS=${process.env.BENCH_QUESTION_IDS}`);
  const server = DRIVER === 'pg' ? await freshOrKept() : undefined;
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    // A PGlite folder that already holds the turns is searched again, as BENCH_REUSE does on a server.
    DATA_DIR: DRIVER === 'pglite' ? (process.env.BENCH_DATA_DIR ?? 'memory://') : 'memory://',
    DATABASE_URL: server?.url,
    LLM_BASE_URL: '',
    LLM_MODEL: '',
  });
  const embedder = await createEmbedder(config);
  const ctx = await createAppContext(config, { embedder, llm: null });
  const listener = await listenOnLoopback(ctx);
  const { post } = listener;
  const db = ctx.database.db;

  try {
    const [{ n: stored } = { n: 0 }] = await queryRows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM turns`);
    const sessionsOf = (q: LongMemEvalQuestion) =>
      q.haystack_sessions.map((s, i) => ({ id: q.haystack_session_ids[i]!, date: q.haystack_dates[i]!, turns: sessionTurns(s) }));
    const turnCount = questions.reduce((n, q) => n + sessionsOf(q).reduce((m, s) => m + s.turns.length, 0), 0);
    console.log(`${questions.length} questions, ${turnCount} turns (${DRIVER}, embedder ${embedder.id})`);

    if (Number(stored) === 0) {
      const jobs = questions.flatMap((q) =>
        sessionsOf(q)
          .filter((s) => s.turns.length > 0)
          .map((s) => ({ userId: q.question_id, body: exportOf(s.id, s.date)(s.turns) })),
      );
      if (EMBED_ANCHOR_TURNS > 0)
        await embedderAlone(
          embedder,
          jobs.map((job) => job.body),
        );
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      let next = 0;
      await Promise.all(
        Array.from({ length: IMPORT_CONCURRENCY }, async () => {
          while (next < jobs.length) {
            const job = jobs[next++]!;
            await post(`/v1/conversations/import?agentId=${AGENT}&userId=${encodeURIComponent(job.userId)}`, job.body);
          }
        }),
      );
      const ms = performance.now() - t0;
      console.log(
        `imported ${jobs.length} sessions in ${(ms / 1000).toFixed(1)} s: ${((turnCount * 1000) / ms).toFixed(1)} turns/s (${coresBusy(cpu0, ms)} cores busy)\n`,
      );
    } else {
      // A store indexed by an earlier version is re-keyed at start, by the backfill job: wait for it.
      const t0 = performance.now();
      for (;;) {
        const [open] = await queryRows<{ n: number }>(db, sql`SELECT count(*)::int AS n FROM jobs WHERE kind = 'backfill' AND status IN ('queued', 'running')`);
        if (Number(open?.n) === 0) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      console.log(
        `searching the ${stored} turns imported before (BENCH_REUSE or BENCH_DATA_DIR; ${((performance.now() - t0) / 1000).toFixed(1)} s of backfill first)\n`,
      );
    }

    // Conversation ids by (user, session id): the import names each conversation after its session.
    const conversations = await queryRows<{ id: string; user_id: string; title: string }>(
      db,
      sql`SELECT id, user_id, title FROM conversations WHERE agent_id = ${AGENT}`,
    );
    const conversationOf = new Map(conversations.map((c) => [`${c.user_id}/${c.title}`, c.id]));

    const recall = new Map<string, Recall>();
    const latency = new Map<Retriever, number[]>();
    const add = (retriever: Retriever, type: string, answerSessions: string[], evidence: string[], ranked: Hit[]) => {
      const sessions = [...new Set(ranked.map((h) => h.conversationId))];
      const turns = ranked.slice(0, 10).map((h) => `${h.conversationId}#${h.turn}`);
      const all = (wanted: string[], got: string[]) => (wanted.length > 0 && wanted.every((w) => got.includes(w)) ? 1 : 0);
      const any = (wanted: string[], got: string[]) => (wanted.some((w) => got.includes(w)) ? 1 : 0);
      // A ranking of sessions alone has no turn figure.
      const sessionsOnly = retriever === 'bm25 sessions';
      for (const t of [type, 'all']) {
        const key = `${retriever}|${t}`;
        const r = recall.get(key) ?? { s5: 0, s10: 0, a5: 0, t10: sessionsOnly ? NaN : 0, n: 0 };
        r.s5 += all(answerSessions, sessions.slice(0, 5));
        r.s10 += all(answerSessions, sessions.slice(0, 10));
        r.a5 += any(answerSessions, sessions.slice(0, 5));
        r.t10 += all(evidence, turns);
        r.n += 1;
        recall.set(key, r);
      }
    };

    if (TUNE) {
      await tune(questions, sessionsOf, conversationOf, (options) => ctx.turns.forTenant('default').search(options.query as string, options as never));
      return;
    }

    for (const q of questions) {
      const sessions = sessionsOf(q);
      const idOf = (sessionId: string) => conversationOf.get(`${q.question_id}/${sessionId}`)!;
      const evidence = sessions.flatMap((s) => s.turns.flatMap((t, i) => (t.hasAnswer ? [`${idOf(s.id)}#${i + 1}`] : [])));
      const answerSessions = q.answer_session_ids.map(idOf);
      const asked = longMemEvalDate(q.question_date);
      const asOf = new Date(Date.UTC(asked.getUTCFullYear(), asked.getUTCMonth(), asked.getUTCDate(), 23, 59, 59)).toISOString();
      for (const mode of MODES) {
        const t0 = performance.now();
        const { hits } = await post<{ hits: Hit[] }>('/v1/turns/search', {
          query: q.question,
          agentId: AGENT,
          userId: q.question_id,
          topK: TOP_K,
          mode,
          ...(AS_OF ? { asOf } : {}),
          ...EXTRA,
        });
        (latency.get(mode) ?? latency.set(mode, []).get(mode)!).push(performance.now() - t0);
        add(mode, q.question_type, answerSessions, evidence, hits);
        if (MISSES) printMiss(mode, q, evidence, answerSessions, hits);
      }
      if (BY_CONVERSATION) {
        // Sessions as groupBy "conversation" ranks them (hybrid); its turns in that order.
        const t0 = performance.now();
        const { conversations } = await post<{ conversations: { turns: Hit[] }[] }>('/v1/turns/search', {
          query: q.question,
          agentId: AGENT,
          userId: q.question_id,
          topK: TOP_K,
          groupBy: 'conversation',
          ...(AS_OF ? { asOf } : {}),
          ...EXTRA,
        });
        (latency.get('by conversation') ?? latency.set('by conversation', []).get('by conversation')!).push(performance.now() - t0);
        add(
          'by conversation',
          q.question_type,
          answerSessions,
          evidence,
          conversations.flatMap((c) => c.turns),
        );
      }
      // The paper's baseline: BM25 over this question's turns, keyed by the user's message alone.
      const bm25 = new InMemoryBm25Index();
      for (const s of sessions) s.turns.forEach((t, i) => bm25.add(`${idOf(s.id)}#${i + 1}`, t.question));
      const ranked = bm25.search(q.question, { topK: TOP_K }).map((h) => {
        const [conversationId, turn] = h.id.split('#');
        return { conversationId: conversationId!, turn: Number(turn) };
      });
      add('bm25 turns', q.question_type, answerSessions, evidence, ranked);
      // BM25 over whole sessions, every message of each (the "plain BM25 over sessions").
      const bySession = new InMemoryBm25Index();
      q.haystack_sessions.forEach((s, i) => bySession.add(idOf(q.haystack_session_ids[i]!) ?? `absent ${i}`, s.map((m) => m.content).join('\n')));
      const rankedSessions = bySession.search(q.question, { topK: TOP_K }).map((h) => ({ conversationId: h.id, turn: 0 }));
      add('bm25 sessions', q.question_type, answerSessions, evidence, rankedSessions);
    }

    const types = [...new Set(questions.map((q) => q.question_type))].sort();
    const retrievers: Retriever[] = [...MODES, ...(BY_CONVERSATION ? (['by conversation'] as const) : []), ...BM25_RETRIEVERS];
    printRecall(recall, types, retrievers);
    if (MODES.includes('hybrid')) printAgainstWords(recall, types);
    console.log('\nsearch latency through HTTP, ms p50 / p95:');
    for (const mode of [...MODES, ...(BY_CONVERSATION ? (['by conversation'] as const) : [])]) {
      const xs = latency.get(mode) ?? [];
      console.log(
        `  ${mode.padEnd(15)} ${pct(xs, 50).toFixed(1)} / ${pct(xs, 95).toFixed(1)}  (${xs.length} searches, ${Number(stored) || turnCount} turns in the tenant)`,
      );
    }
  } finally {
    await listener.close();
    await ctx.close();
    if (server && !REUSE) await server.drop();
  }
}

/** Each combination of the grid's options: hybrid search through the library, recall over all questions and the two hard types. */
async function tune(
  questions: LongMemEvalQuestion[],
  sessionsOf: (q: LongMemEvalQuestion) => { id: string; turns: SessionTurn[] }[],
  conversationOf: Map<string, string>,
  search: (options: Record<string, unknown>) => Promise<{ hits: (Hit & RankableTurn)[] }>,
) {
  const names = Object.keys(TUNE!);
  let grid: Record<string, number>[] = [{}];
  for (const name of names) grid = grid.flatMap((g) => TUNE![name]!.map((v) => ({ ...g, [name]: v })));
  console.log(
    `${names.join(' × ')}: session R_all@5 / session R_all@10 / turn R_all@10 (all, multi-session, temporal-reasoning, single-session-preference), search p50 through the library`,
  );
  for (const options of grid) {
    const sums = new Map<string, number[]>();
    const took: number[] = [];
    for (const q of questions) {
      const idOf = (sessionId: string) => conversationOf.get(`${q.question_id}/${sessionId}`)!;
      const evidence = sessionsOf(q).flatMap((s) => s.turns.flatMap((t, i) => (t.hasAnswer ? [`${idOf(s.id)}#${i + 1}`] : [])));
      const answerSessions = q.answer_session_ids.map(idOf);
      const asked = longMemEvalDate(q.question_date);
      const asOf = new Date(Date.UTC(asked.getUTCFullYear(), asked.getUTCMonth(), asked.getUTCDate(), 23, 59, 59));
      // `vector` and `k` are the fusion weights' (text stays 1); the others are search options.
      const {
        vector,
        k,
        sessionSecond,
        conversationVector,
        conversationK,
        feedbackTurns,
        feedbackWeight,
        priorFeedbackTurns,
        priorFeedbackWeight,
        priorVector,
        ...rest
      } = options;
      const weights = vector === undefined && k === undefined ? {} : { weights: { signals: { vector: vector ?? 0.3, text: 1 }, k: k ?? 20 } };
      // As searchConversations: sessions ranked by conversation use its feedback unless the grid sets one.
      const byConversation = conversationVector !== undefined || conversationK !== undefined;
      const feedback =
        feedbackTurns !== undefined
          ? { vectorFeedback: { turns: feedbackTurns, weight: feedbackWeight ?? 1 } }
          : byConversation
            ? { vectorFeedback: CONVERSATION_VECTOR_FEEDBACK }
            : {};
      // What ranks the conversations inside the library (the turn list's prior reads their places).
      const prior = {
        ...((priorFeedbackTurns !== undefined || priorFeedbackWeight !== undefined) && {
          conversationFeedback: {
            turns: priorFeedbackTurns ?? CONVERSATION_VECTOR_FEEDBACK.turns,
            weight: priorFeedbackWeight ?? CONVERSATION_VECTOR_FEEDBACK.weight,
          },
        }),
        ...(priorVector !== undefined && { conversationWeights: { ...CONVERSATION_FUSION_WEIGHTS, signals: { vector: priorVector, text: 1 } } }),
      };
      const t0 = performance.now();
      const { hits } = await search({
        query: q.question,
        agentId: AGENT,
        userId: q.question_id,
        topK: TOP_K,
        mode: 'hybrid',
        asOf,
        ...rest,
        ...weights,
        ...feedback,
        ...prior,
      });
      took.push(performance.now() - t0);
      let sessions = [...new Set(hits.map((h) => h.conversationId))];
      if (sessionSecond !== undefined) {
        // Sessions by their turns' scores, each further one counting sessionSecond^i (an experiment).
        const best = new Map<string, number[]>();
        for (const h of hits as (Hit & { score: number })[])
          (best.get(h.conversationId) ?? best.set(h.conversationId, []).get(h.conversationId)!).push(h.score);
        const score = (c: string) => best.get(c)!.reduce((sum, x, i) => sum + x * sessionSecond ** i, 0);
        sessions = [...sessions].sort((a, b) => score(b) - score(a));
      }
      if (byConversation) {
        // Sessions as `groupBy: "conversation"` ranks them, with these weights.
        const weights = {
          ...CONVERSATION_FUSION_WEIGHTS,
          signals: { ...CONVERSATION_FUSION_WEIGHTS.signals, ...(conversationVector !== undefined && { vector: conversationVector }) },
          ...(conversationK !== undefined && { k: conversationK }),
        };
        sessions = rankConversations(hits, { weights }).map((c) => c.conversationId);
      }
      const turns = hits.slice(0, 10).map((h) => `${h.conversationId}#${h.turn}`);
      const all = (wanted: string[], got: string[]) => (wanted.length > 0 && wanted.every((w) => got.includes(w)) ? 1 : 0);
      const row = [all(answerSessions, sessions.slice(0, 5)), all(answerSessions, sessions.slice(0, 10)), all(evidence, turns), 1];
      for (const t of ['all', q.question_type]) {
        const acc = sums.get(t) ?? [0, 0, 0, 0];
        sums.set(
          t,
          acc.map((v, i) => v + row[i]!),
        );
      }
    }
    const cell = (t: string) => {
      const [s5, s10, t10, n] = sums.get(t) ?? [0, 0, 0, 1];
      return `${(s5! / n!).toFixed(2)}/${(s10! / n!).toFixed(2)}/${(t10! / n!).toFixed(2)}`;
    };
    console.log(
      `${JSON.stringify(options).padEnd(48)} ${['all', 'multi-session', 'temporal-reasoning', 'single-session-preference'].map((t) => cell(t).padStart(15)).join('')}  p50 ${pct(took, 50).toFixed(1)} ms`,
    );
  }
}

async function freshOrKept(): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (REUSE && serverUrl) {
    const url = new URL(serverUrl);
    url.pathname = '/memrag_bench_longmemeval';
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url.toString() });
    const exists = await client.connect().then(
      () => true,
      () => false,
    );
    if (exists) {
      await client.end();
      return { url: url.toString(), drop: async () => {} };
    }
  }
  return freshServerDatabase(serverUrl, 'memrag_bench_longmemeval');
}

await main();
