/**
 * Tunes the extractive answer's weights (src/chat/answer-weights.ts) on SQuAD v1.1's tuning
 * articles. The features of every candidate sentence are computed once, by the chat's own code
 * over the passages document search recalls (topK 5, `tagsAny` the question's article, and
 * another article's for declining), and cached in TUNING_FEATURES; the grid over the weights
 * then runs in seconds.
 *
 *   npx tsx scripts/bench/extractive-tuning.ts
 *   TUNING_QUESTIONS=800 TUNING_SEED=7 npx tsx scripts/bench/extractive-tuning.ts
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createAppContext } from '../../src/app-context.js';
import { type AnswerWeights, scoreSentence } from '../../src/chat/answer-weights.js';
import { scoreCandidates } from '../../src/chat/extractive-answer.js';
import type { SentenceFeatures } from '../../src/chat/sentence-features.js';
import { SourceList } from '../../src/chat/sources.js';
import { loadConfig } from '../../src/config/config.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { DEFAULT_TENANT_ID } from '../../src/tenancy/tenant-id.js';
import { pooled } from './lib/pooled.js';
import { answers, articleTag, loadSquad, otherArticle, sampleQuestions } from './lib/squad.js';
import { cachingEmbedder } from './lib/vector-cache.js';

const QUESTIONS = Number(process.env.TUNING_QUESTIONS ?? 600);
const SEED = Number(process.env.TUNING_SEED ?? 7);
const FILE = process.env.TUNING_FEATURES ?? `/tmp/memrag-extractive-features-v5-${QUESTIONS}-${SEED}.json`;

interface Row {
  /** Per candidate: features, whether it answers, source rank, candidate order. */
  c: { f: SentenceFeatures; ok: boolean; order: number; rank: number }[];
}
interface Features {
  own: Row[];
  other: Row[];
}

async function computeFeatures(): Promise<Features> {
  const squad = loadSquad();
  const questions = sampleQuestions(squad.questions, QUESTIONS, SEED);
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', DATA_DIR: 'memory://' };
  for (const name of ['LLM_MODEL', 'LLM_BASE_URL', 'LLM_API_KEY']) delete env[name];
  const config = loadConfig(env);
  const embedder = cachingEmbedder(await createEmbedder(config));
  const ctx = await createAppContext(config, { embedder });
  try {
    const documents = ctx.documents.forTenant(DEFAULT_TENANT_ID);
    await pooled(squad.paragraphs, 4, (p) =>
      documents.ingest({ title: p.title, content: p.context, source: `squad:${p.article}:${p.index}`, tags: [articleTag(p.article)], format: 'text' }),
    );
    const search = ctx.search.forTenant(DEFAULT_TENANT_ID);
    const rowOf = async (question: string, gold: string[], article: number): Promise<Row> => {
      const hits = await search.search(question, { topK: 5, tagsAny: [articleTag(article)], passages: true });
      const list = new SourceList();
      for (const hit of hits) list.addDocument(hit);
      const { candidates } = await scoreCandidates(question, list.all(), { embedder, embedded: Infinity });
      return { c: candidates.map((c) => ({ f: c.features, ok: answers(c.text, gold), order: c.order, rank: c.sourceRank })) };
    };
    const own: Row[] = [];
    const other: Row[] = [];
    await pooled(
      questions.map((q, i) => ({ q, i })),
      2,
      async ({ q, i }) => {
        own[i] = await rowOf(q.question, q.answers, q.article);
        other[i] = await rowOf(q.question, q.answers, otherArticle(q.article, squad.titles.length, i));
      },
    );
    return { own, other };
  } finally {
    await ctx.close();
  }
}

const features: Features = existsSync(FILE) ? (JSON.parse(readFileSync(FILE, 'utf8')) as Features) : await computeFeatures();
writeFileSync(FILE, JSON.stringify(features));

/** The candidates given a vector: the `embedded` best under `prescore` (as scoreCandidates picks them). */
function masked(n: number, prescore: AnswerWeights): Features {
  const mask = (row: Row): Row => {
    if (n >= row.c.length) return row;
    const keep = new Set([...row.c].sort((a, b) => scoreSentence(b.f, prescore) - scoreSentence(a.f, prescore) || a.order - b.order).slice(0, n));
    return { c: row.c.map((c) => (keep.has(c) ? c : { ...c, f: { ...c.f, cosine: 0 } })) };
  };
  return { own: features.own.map(mask), other: features.other.map(mask) };
}

function best(row: Row, w: AnswerWeights) {
  let top: Row['c'][number] | undefined;
  let topScore = -Infinity;
  for (const c of row.c) {
    const s = scoreSentence(c.f, w);
    if (s > topScore || (s === topScore && top && (c.rank < top.rank || (c.rank === top.rank && c.order < top.order)))) [top, topScore] = [c, s];
  }
  return { ok: top?.ok ?? false, score: topScore };
}

/** answer@1 without declining; θ80, the lowest threshold declining ≥ 80% of questions asked of another article; answer@1 declining below it. */
function evaluate(w: AnswerWeights, set: Features = features) {
  const own = set.own.map((r) => best(r, w));
  const other = set.other.map((r) => best(r, w));
  const at1 = own.filter((o) => o.ok).length / own.length;
  const others = other.map((o) => o.score).sort((a, b) => a - b);
  const threshold = others[Math.ceil(0.8 * others.length) - 1]! + 1e-6;
  const at1Declining = own.filter((o) => o.ok && o.score >= threshold).length / own.length;
  const wronglyDeclined = own.filter((o) => o.score < threshold).length / own.length;
  return { at1, threshold, at1Declining, wronglyDeclined };
}

const fmt = (x: number) => x.toFixed(3);
const show = (label: string, w: AnswerWeights, set?: Features) => {
  const r = evaluate(w, set);
  console.log(
    `${label.padEnd(34)} ${JSON.stringify({ ...w, decline: undefined })} answer@1 ${fmt(r.at1)} | θ80 ${fmt(r.threshold)}: answer@1 ${fmt(r.at1Declining)}, own article declined ${fmt(r.wronglyDeclined)}`,
  );
  return r;
};
const grid = (cosines: number[], set?: Features) => {
  let top: { w: AnswerWeights; at1: number } | undefined;
  for (const cosine of cosines)
    for (const rank of [0, 0.1, 0.2, 0.3])
      for (const type of [0, 0.1, 0.2, 0.3])
        for (const bigram of [0, 0.1, 0.2, 0.4])
          for (const context of [0, 0.1, 0.2, 0.3]) {
            const w = { lexical: 1, cosine, rank, type, bigram, context, decline: 0 };
            const { at1 } = evaluate(w, set);
            // Ties go to the smaller weights: listed first, kept.
            if (!top || at1 > top.at1 + 1e-9) top = { w, at1 };
          }
  return top!.w;
};

console.log(`${features.own.length} questions (seed ${SEED}); features in ${FILE}`);
const none = { lexical: 1, cosine: 0, rank: 0, type: 0, bigram: 0, context: 0, decline: 0 };
show('lexical (BM25 over sentences) only', none);
const lexical = grid([0]);
const lexicalResult = show('best without cosine', lexical);
const full = grid([0.5, 1, 1.5, 2, 2.5, 3]);
show('best, every sentence embedded', full);
console.log('ablations from the best (one weight set to 0):');
for (const k of ['cosine', 'rank', 'type', 'bigram', 'context'] as const) show(`  without ${k}`, { ...full, [k]: 0 });
console.log('only the lexically best N sentences embedded (prescore: the best without cosine), weights tuned per N:');
for (const n of process.env.TUNING_SKIP_N ? [] : [1, 2, 3, 4, 6, 8, 12]) {
  const set = masked(n, lexical);
  const w = grid([0.5, 1, 1.5, 2, 2.5, 3], set);
  show(`  N = ${n}`, w, set);
}
console.log(`lexical-only decline threshold θ80 ${fmt(lexicalResult.threshold)}`);

/** Coordinate ascent from `start`, each weight in turn over a finer range; the grid's steps are coarse. */
function refine(start: AnswerWeights, set: Features, withCosine = true): AnswerWeights {
  let w = start;
  let at1 = evaluate(w, set).at1;
  const ranges: Record<string, number[]> = {
    cosine: [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 2.5, 3],
    rank: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8],
    type: [0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4],
    bigram: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8],
    context: [0, 0.05, 0.1, 0.15, 0.2, 0.3],
  };
  for (let pass = 0; pass < 3; pass++) {
    for (const [k, values] of Object.entries(ranges)) {
      if (k === 'cosine' && !withCosine) continue;
      for (const v of values) {
        const candidate = { ...w, [k]: v };
        const r = evaluate(candidate, set).at1;
        if (r > at1 + 1e-9) [w, at1] = [candidate, r];
      }
    }
  }
  return w;
}

if (process.env.TUNING_REFINE) {
  const { LEXICAL_ANSWER_WEIGHTS: prescore } = await import('../../src/chat/answer-weights.js');
  const { DEFAULT_EMBEDDED_SENTENCES: n } = await import('../../src/chat/extractive-answer.js');
  const lexicalRefined = refine(lexical, features, false);
  show('refined without cosine', lexicalRefined);
  const set = masked(n, prescore);
  show(`refined, N = ${n}`, refine(grid([0.5, 1, 1.5, 2, 2.5, 3], set), set), set);
}

// The thresholds around θ80 for the weights chosen (src/chat/answer-weights.ts), with the vectors
// the chat computes: declining more than 80% leaves room for another sample of questions.
const { ANSWER_WEIGHTS, LEXICAL_ANSWER_WEIGHTS } = await import('../../src/chat/answer-weights.js');
const { DEFAULT_EMBEDDED_SENTENCES } = await import('../../src/chat/extractive-answer.js');
for (const [label, w, set] of [
  ['chosen', ANSWER_WEIGHTS, masked(DEFAULT_EMBEDDED_SENTENCES, LEXICAL_ANSWER_WEIGHTS)],
  ['chosen, no embedder', LEXICAL_ANSWER_WEIGHTS, features],
] as const) {
  const base = evaluate({ ...w, decline: -Infinity }, set).at1;
  console.log(`${label}: answer@1 ${fmt(base)} without declining`);
  const own = set.own.map((r) => best(r, w));
  const other = set.other.map((r) => best(r, w));
  for (const share of [0.8, 0.82, 0.85, 0.88, 0.9]) {
    const sorted = other.map((o) => o.score).sort((a, b) => a - b);
    const theta = sorted[Math.ceil(share * sorted.length) - 1]! + 1e-6;
    const at1 = own.filter((o) => o.ok && o.score >= theta).length / own.length;
    console.log(`  θ ${fmt(theta)}: declined ${fmt(share)} of other-article questions, answer@1 ${fmt(at1)} (${((at1 - base) * 100).toFixed(1)} points)`);
  }
  const at1 = own.filter((o) => o.ok && o.score >= w.decline).length / own.length;
  console.log(`  θ ${fmt(w.decline)} (set): declined ${fmt(other.filter((o) => o.score < w.decline).length / other.length)}, answer@1 ${fmt(at1)}`);
}
