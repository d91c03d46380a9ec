/**
 * Answers without an LLM (`mode: "extractive"`) on SQuAD v1.1 (the tuning articles), through the
 * HTTP API, on the embedded default: the bundled USE-lite embedder, PGlite in memory.
 *
 * Every paragraph is a document tagged with its article; every question is asked with `tagsAny`
 * its article and topK 5. A sentence answers when it contains a gold answer (SQuAD normalisation).
 *
 *  - answer@1 / answer@3: the reply's first cited segment / any of its segments answers.
 *  - baselines over the passages `/v1/search` returns for the same request: the first sentence
 *    of the top passage, BM25 over the passages' sentences, the old answerer (cited chunks,
 *    shared-stem count), and the best possible sentence (some sentence answers).
 *  - declined: the same questions asked against another article's documents; the share of
 *    replies that say nothing answers (and, for the right article, the share wrongly declined).
 *  - `/v1/chat` p50/p95 over BENCH_LATENCY questions, vectors computed afresh (the vector cache
 *    that spares the model on accuracy runs is bypassed).
 *
 *   npm run bench:extractive
 *   BENCH_QUESTIONS=1000 BENCH_DECLINE=300 BENCH_LATENCY=100 npm run bench:extractive
 */
import { listenOnLoopback } from './lib/listening-app.js';
import { performance } from 'node:perf_hooks';
import { stemmer } from 'stemmer';
import { createAppContext } from '../../src/app-context.js';
import { loadConfig } from '../../src/config/config.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import type { Embedder } from '../../src/embeddings/embedder.js';
import { splitSentences } from '../../src/text/sentence-split.js';
import { legacySentences } from './lib/legacy-extractive.js';
import { pooled } from './lib/pooled.js';
import { answers, articleTag, loadSquad, otherArticle, percentile, sampleQuestions } from './lib/squad.js';
import { cachingEmbedder } from './lib/vector-cache.js';

const QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 300);
const DECLINE = Number(process.env.BENCH_DECLINE ?? 150);
const LATENCY = Number(process.env.BENCH_LATENCY ?? 60);
const TOP_K = 5;
/** How a reply says that nothing answers: the declining answer, and the old one for no match at all. */
const DECLINE_PREFIXES = ['Nothing in the memories or documents answers', 'I could not find anything about that'];

const squad = loadSquad();
const questions = sampleQuestions(squad.questions, QUESTIONS);
const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', DATA_DIR: 'memory://' };
// Without a model, the chat answers extractively: the mode measured here.
for (const name of ['LLM_MODEL', 'LLM_BASE_URL', 'LLM_API_KEY']) delete env[name];
const config = loadConfig(env);
const model = await createEmbedder(config);
const cached = cachingEmbedder(model);
let fresh = false;
const embedder: Embedder = {
  id: model.id,
  dimensions: model.dimensions,
  maxInputTokens: model.maxInputTokens,
  ...(model.countTokens ? { countTokens: model.countTokens.bind(model) } : {}),
  embed: (texts, options) => (fresh ? model.embed(texts, options) : cached.embed(texts, options)),
  close: () => model.close(),
};
const ctx = await createAppContext(config, { embedder });
const listener = await listenOnLoopback(ctx);
const { post } = listener;

interface ChatReply {
  answer: string;
  citations: { id: number; kind: string; quotes?: { start: number; end: number }[] }[];
}
interface SearchReply {
  hits: { documentId: string; text: string }[];
}

const segmentsOf = (answer: string) =>
  answer
    .split(/\s*\[\d+(?:\s*,\s*\d+)*\]\s*/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
const declined = (answer: string) => DECLINE_PREFIXES.some((p) => answer.startsWith(p));

try {
  const started = performance.now();
  const textOf = new Map<string, string>();
  const needed = new Set(questions.map((q) => q.article));
  for (let i = 0; i < Math.min(DECLINE, questions.length); i++) needed.add(otherArticle(questions[i]!.article, squad.titles.length, i));
  const paragraphs = squad.paragraphs.filter((p) => needed.has(p.article));
  await pooled(paragraphs, 4, async (p) => {
    const reply = await post<{ document: { id: string } }>('/v1/documents', {
      title: p.title,
      text: p.context,
      source: `squad:${p.article}:${p.index}`,
      tags: [articleTag(p.article)],
    });
    textOf.set(reply.document.id, p.context);
  });
  console.log(`ingested ${paragraphs.length} paragraphs of ${needed.size} articles in ${((performance.now() - started) / 1000).toFixed(0)} s`);

  const tally = { at1: 0, at3: 0, wronglyDeclined: 0, first: 0, bm25: 0, legacy: 0, oracle: 0, retrieved: 0 };
  const chatMs: number[] = [];
  const asked = (q: (typeof questions)[number], article: number, i: number) =>
    post<ChatReply>('/v1/chat', { message: q.question, tagsAny: [articleTag(article)], topK: TOP_K, userId: `bench-${i}`, agentId: 'bench-extractive' });
  await pooled(
    questions.map((q, i) => ({ q, i })),
    2,
    async ({ q, i }) => {
      const [reply, search] = await Promise.all([
        asked(q, q.article, i),
        post<SearchReply>('/v1/search', { query: q.question, tagsAny: [articleTag(q.article)], topK: TOP_K }),
      ]);
      const segments = segmentsOf(reply.answer);
      if (declined(reply.answer)) tally.wronglyDeclined++;
      else {
        if (segments[0] && answers(segments[0], q.answers)) tally.at1++;
        if (segments.slice(0, 3).some((s) => answers(s, q.answers))) tally.at3++;
      }
      const passages = search.hits.map((h) => textOf.get(h.documentId) ?? h.text);
      const sentences = passages.flatMap((p) => splitSentences(p));
      if (passages.some((p) => answers(p, q.answers))) tally.retrieved++;
      if (sentences.some((s) => answers(s, q.answers))) tally.oracle++;
      const first = passages[0] ? splitSentences(passages[0])[0] : undefined;
      if (first && answers(first, q.answers)) tally.first++;
      const best = bm25Best(q.question, sentences);
      if (best !== undefined && answers(best, q.answers)) tally.bm25++;
      const old = legacySentences(
        q.question,
        search.hits.map((h) => h.text),
        1,
      )[0];
      if (old !== undefined && answers(old, q.answers)) tally.legacy++;
    },
  );

  let declines = 0;
  const declineQuestions = questions.slice(0, DECLINE);
  await pooled(
    declineQuestions.map((q, i) => ({ q, i })),
    2,
    async ({ q, i }) => {
      const reply = await asked(q, otherArticle(q.article, squad.titles.length, i), QUESTIONS + i);
      if (declined(reply.answer)) declines++;
    },
  );

  // One request at a time, vectors from the model, as a lone client would see it.
  fresh = true;
  for (const [i, q] of questions.slice(0, LATENCY).entries()) {
    const t = performance.now();
    await asked(q, q.article, 2 * QUESTIONS + i);
    chatMs.push(performance.now() - t);
  }

  const n = questions.length;
  const share = (k: number, of = n) => (k / of).toFixed(3);
  console.log(`\nSQuAD v1.1 tuning articles: ${n} questions (seeded sample), topK ${TOP_K}, embedder ${model.id}`);
  console.table({
    '/v1/chat extractive': { 'answer@1': share(tally.at1), 'answer@3': share(tally.at3) },
    'baseline: first sentence of top passage': { 'answer@1': share(tally.first) },
    "baseline: BM25 over the passages' sentences": { 'answer@1': share(tally.bm25) },
    'baseline: old answerer (cited chunks, shared stems)': { 'answer@1': share(tally.legacy) },
    'ceiling: some sentence of the passages answers': { 'answer@1': share(tally.oracle) },
    'ceiling: some passage contains the answer': { 'answer@1': share(tally.retrieved) },
  });
  console.log(`declined against another article: ${share(declines, declineQuestions.length)} of ${declineQuestions.length}`);
  console.log(`declined against its own article: ${share(tally.wronglyDeclined)} of ${n}`);
  console.log(
    `/v1/chat latency over ${chatMs.length} questions (fresh vectors, one at a time): p50 ${percentile(chatMs, 50).toFixed(1)} ms, p95 ${percentile(chatMs, 95).toFixed(1)} ms`,
  );
} finally {
  await listener.close();
  await ctx.close();
}

/** Classic BM25 (k1 1.2, b 0.75) over the candidate sentences, IDF from them too. */
function bm25Best(query: string, sentences: readonly string[]): string | undefined {
  const stop = new Set(
    'a an and are as at be by did do does for from how in is it of on or that the this to was were what when where which who why with'.split(' '),
  );
  const terms = (t: string) => (t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !stop.has(w)).map((w) => stemmer(w));
  const docs = sentences.map(terms);
  const avg = docs.reduce((s, d) => s + d.length, 0) / Math.max(1, docs.length);
  const q = [...new Set(terms(query))];
  let best: string | undefined;
  let bestScore = 0;
  docs.forEach((d, i) => {
    let score = 0;
    for (const t of q) {
      const tf = d.filter((x) => x === t).length;
      if (tf === 0) continue;
      const df = docs.filter((x) => x.includes(t)).length;
      const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
      score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.length) / avg));
    }
    if (score > bestScore) [best, bestScore] = [sentences[i], score];
  });
  return best;
}
