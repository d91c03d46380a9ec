/**
 * Episodic recall over a generated multi-session benchmark (scripts/bench/lib/multi-session-conversations.ts):
 * every user's sessions are imported through the HTTP API as conversations, each question is asked
 * through `POST /v1/turns/search` for that user in each mode, and recall@5/@10 of the evidence
 * turns is reported per question type, beside a plain in-memory BM25 over the same turns' own
 * words (question and answer, no neighbours, no date) in the same run. For changed facts, how
 * often the latest value ranks above the one it replaced. Search latency p50/p95 per mode.
 *
 *   npm run bench:recall
 *   BENCH_USERS=8 BENCH_SESSIONS=30 BENCH_SEED=7 npm run bench:recall
 *   BENCH_DRIVER=pg BENCH_DATABASE_URL=postgres://… npm run bench:recall
 *   BENCH_WEIGHTS='{"vector":1,"text":1,"k":60}' npm run bench:recall   # other fusion weights for hybrid
 */
import { listenOnLoopback } from './lib/listening-app.js';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { queryRows } from '../../src/db/query-rows.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { InMemoryBm25Index } from '../../src/retrieval/bm25/bm25.js';
import { freshServerDatabase } from './lib/fresh-server-database.js';
import { type EvidenceRef, type GeneratedUser, type QuestionType, generateConversations } from './lib/multi-session-conversations.js';

const USERS = Number(process.env.BENCH_USERS ?? 6);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 24);
const SEED = Number(process.env.BENCH_SEED ?? 1);
const DRIVER = process.env.BENCH_DRIVER ?? 'pglite';
const AGENT = 'bench';
// Hybrid's fusion weights for this run (JSON, e.g. {"vector":1,"text":1,"k":60}); default the calibrated ones.
const WEIGHTS = process.env.BENCH_WEIGHTS ? (JSON.parse(process.env.BENCH_WEIGHTS) as { vector: number; text: number; k?: number }) : undefined;
const MODES = ['hybrid', 'vector', 'text'] as const;
type Retriever = (typeof MODES)[number] | 'bm25 (in memory)';
const TYPES: readonly QuestionType[] = ['single', 'neighbour', 'multi', 'latest', 'date'];

interface TurnHit {
  conversationId: string;
  turn: number;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

function exportOf(_user: GeneratedUser, session: GeneratedUser['sessions'][number]) {
  const messages = session.turns.flatMap((t, i) => {
    const at = (offset: number) => new Date(session.at.getTime() + (i * 2 + offset) * 60_000).toISOString();
    return [
      { seq: i * 2 + 1, turn: i + 1, role: 'user' as const, content: t.question, createdAt: at(0) },
      { seq: i * 2 + 2, turn: i + 1, role: 'assistant' as const, content: t.answer, createdAt: at(1) },
    ];
  });
  const createdAt = session.at.toISOString();
  return {
    format: 'memrag.conversation',
    version: 1,
    conversation: { id: randomUUID(), agentId: AGENT, title: session.turns[0]!.question.slice(0, 80), createdAt, updatedAt: createdAt },
    messages,
    checkpoints: [],
    summary: null,
  };
}

async function main() {
  const users = generateConversations({ users: USERS, sessionsPerUser: SESSIONS, seed: SEED });
  const turnCount = users.reduce((n, u) => n + u.sessions.reduce((m, s) => m + s.turns.length, 0), 0);
  const server =
    DRIVER === 'pg' ? await freshServerDatabase(process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL, 'memrag_bench_recall') : undefined;
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATA_DIR: 'memory://', DATABASE_URL: server?.url, LLM_BASE_URL: '', LLM_MODEL: '' });
  const embedder = await createEmbedder(config);
  const ctx = await createAppContext(config, { embedder, llm: null });
  const listener = await listenOnLoopback(ctx);
  const { post } = listener;

  try {
    console.log(
      `${USERS} users × ${SESSIONS} sessions, ${turnCount} turns, ${users.reduce((n, u) => n + u.questions.length, 0)} questions (seed ${SEED}, ${DRIVER}, embedder ${embedder.id})`,
    );
    // Ingest: each session imported as a conversation of its user; its id maps evidence to hits.
    const conversationOf = new Map<string, string>();
    const importStart = performance.now();
    for (const user of users) {
      for (const session of user.sessions) {
        const reply = await post<{ conversation: { id: string } }>(`/v1/conversations/import?agentId=${AGENT}&userId=${user.userId}`, exportOf(user, session));
        conversationOf.set(`${user.userId}/${session.session}`, reply.conversation.id);
      }
    }
    // Imported turns are indexed in the background: wait until every one has its vector.
    for (;;) {
      const [row] = await queryRows<{ n: number }>(ctx.database.db, sql`SELECT count(*)::int AS n FROM turns WHERE embedding IS NOT NULL`);
      if (Number(row?.n) >= turnCount) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const importMs = performance.now() - importStart;
    console.log(`imported and indexed in ${(importMs / 1000).toFixed(1)} s (${((turnCount * 1000) / importMs).toFixed(1)} turns/s)\n`);

    const recall = new Map<string, { at5: number; at10: number; n: number }>();
    const latestAbove = new Map<Retriever, { above: number; n: number }>();
    const latency = new Map<Retriever, number[]>();
    const add = (retriever: Retriever, type: QuestionType, evidence: string[], ranked: string[]) => {
      for (const t of [type, 'all'] as const) {
        const key = `${retriever}|${t}`;
        const r = recall.get(key) ?? { at5: 0, at10: 0, n: 0 };
        r.at5 += evidence.filter((e) => ranked.slice(0, 5).includes(e)).length / evidence.length;
        r.at10 += evidence.filter((e) => ranked.slice(0, 10).includes(e)).length / evidence.length;
        r.n += 1;
        recall.set(key, r);
      }
    };

    for (const user of users) {
      const id = (ref: EvidenceRef) => `${conversationOf.get(`${user.userId}/${ref.session}`)}#${ref.turn}`;
      // The anchor: BM25 over this user's turns as they are, question and answer only.
      const bm25 = new InMemoryBm25Index();
      for (const session of user.sessions) {
        session.turns.forEach((t, i) => bm25.add(id({ session: session.session, turn: i + 1 }), `${t.question}\n${t.answer}`));
      }
      for (const q of user.questions) {
        const evidence = q.evidence.map(id);
        const rankedBy = new Map<Retriever, string[]>();
        for (const mode of MODES) {
          const t0 = performance.now();
          const { hits } = await post<{ hits: TurnHit[] }>('/v1/turns/search', {
            query: q.text,
            agentId: AGENT,
            userId: user.userId,
            topK: 10,
            mode,
            ...(WEIGHTS && mode === 'hybrid' ? { weights: WEIGHTS } : {}),
          });
          (latency.get(mode) ?? latency.set(mode, []).get(mode)!).push(performance.now() - t0);
          rankedBy.set(
            mode,
            hits.map((h) => `${h.conversationId}#${h.turn}`),
          );
        }
        const t0 = performance.now();
        rankedBy.set(
          'bm25 (in memory)',
          bm25.search(q.text, { topK: 10 }).map((h) => h.id),
        );
        (latency.get('bm25 (in memory)') ?? latency.set('bm25 (in memory)', []).get('bm25 (in memory)')!).push(performance.now() - t0);
        for (const [retriever, ranked] of rankedBy) {
          add(retriever, q.type, evidence, ranked);
          if (q.superseded) {
            const latest = ranked.indexOf(evidence[0]!);
            const old = ranked.indexOf(id(q.superseded));
            const s = latestAbove.get(retriever) ?? { above: 0, n: 0 };
            s.above += latest !== -1 && (old === -1 || latest < old) ? 1 : 0;
            s.n += 1;
            latestAbove.set(retriever, s);
          }
        }
      }
    }

    const retrievers: Retriever[] = [...MODES, 'bm25 (in memory)'];
    const fmt = (x: number) => x.toFixed(3);
    console.log(`recall@5 / recall@10 of the evidence turns (questions per type: ${TYPES.map((t) => `${t} ${recall.get(`hybrid|${t}`)?.n ?? 0}`).join(', ')})`);
    console.log(['retriever'.padEnd(18), ...[...TYPES, 'all'].map((t) => t.padStart(13))].join(''));
    for (const r of retrievers) {
      const cells = [...TYPES, 'all'].map((t) => {
        const v = recall.get(`${r}|${t}`);
        return (v ? `${fmt(v.at5 / v.n)}/${fmt(v.at10 / v.n)}` : '-').padStart(13);
      });
      console.log([r.padEnd(18), ...cells].join(''));
    }
    const at10 = (r: Retriever) => {
      const v = recall.get(`${r}|all`)!;
      return v.at10 / v.n;
    };
    const bestSingle = Math.max(at10('vector'), at10('text'), at10('bm25 (in memory)'));
    console.log(
      `\nhybrid recall@10 ${fmt(at10('hybrid'))} vs best single retriever ${fmt(bestSingle)}: ${((at10('hybrid') - bestSingle) * 100).toFixed(1)} points`,
    );
    console.log('latest value ranked above the value it replaced (changed facts):');
    for (const r of retrievers) {
      const s = latestAbove.get(r);
      if (s) console.log(`  ${r.padEnd(18)} ${s.above}/${s.n}`);
    }
    console.log('search latency through HTTP, ms p50 / p95:');
    for (const r of retrievers) {
      const xs = latency.get(r) ?? [];
      console.log(`  ${r.padEnd(18)} ${pct(xs, 50).toFixed(2)} / ${pct(xs, 95).toFixed(2)}  (${xs.length} searches)`);
    }
  } finally {
    await listener.close();
    await ctx.close();
    await server?.drop();
  }
}

await main();
