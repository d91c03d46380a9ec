/**
 * Sweeps the fusion weights of the turns corpus (episodic recall) on SQuAD's tuning articles and
 * prints the best, for TURN_FUSION_WEIGHTS_BY_EMBEDDER (src/conversations/turn-fusion-weights.ts).
 * A turn is short conversational text asked about in other words, which is closer to a question
 * against the sentences of a Wikipedia paragraph than to SciFact's claims against abstracts (what
 * the documents' weights were calibrated on). Each question is asked against the sentences of its
 * own article; a sentence holding a gold answer is relevant.
 *
 *   npm run calibrate:turns            # BENCH_QUESTIONS (default 2000) questions, seeded sample
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/config.js';
import { createEmbedder } from '../src/embeddings/create-embedder.js';
import { InMemoryBm25Index } from '../src/retrieval/bm25/bm25.js';
import { fuse } from '../src/retrieval/fusion.js';
import { conversationStandings, orderByConversations } from '../src/conversations/conversation-prior.js';
import { rankConversations } from '../src/conversations/conversation-ranking.js';
import { seededRandom } from '../testkit/vector-fixtures.js';

const repoRoot = resolve(fileURLToPath(import.meta.url), '../..');
const file = resolve(repoRoot, '../shared/datasets/squad/squad-v1.1-dev-tuning.json');
const QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 2000);
const CANDIDATES = 50;
// Vector feedback settings [turns, weight] swept beside the plain vector side (vector-feedback.ts).
const FEEDBACK: [number, number][] = [
  [10, 3],
  [5, 1],
];

interface Squad {
  data: { title: string; paragraphs: { context: string; qas: { question: string; answers: { text: string }[] }[] }[] }[];
}

// SQuAD's own answer normalisation: lower case, no punctuation, no articles, single spaces.
const normalise = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
const sentencesOf = (text: string) => text.split(/(?<=[.!?])\s+(?=[A-Z0-9"'(])/).filter((s) => s.trim() !== '');

const squad = JSON.parse(await readFile(file, 'utf8')) as Squad;
const sentences: { id: string; article: number; text: string }[] = [];
const questions: { article: number; text: string; relevant: Set<string> }[] = [];
squad.data.forEach((article, a) => {
  article.paragraphs.forEach((p, pi) => {
    const own = sentencesOf(p.context).map((text, si) => ({ id: `${a}/${pi}/${si}`, article: a, text }));
    sentences.push(...own);
    for (const qa of p.qas) {
      const answers = qa.answers.map((x) => normalise(x.text)).filter((x) => x !== '');
      const relevant = new Set(own.filter((s) => answers.some((ans) => normalise(s.text).includes(ans))).map((s) => s.id));
      if (relevant.size > 0) questions.push({ article: a, text: qa.question, relevant });
    }
  });
});
const rand = seededRandom(14);
const sample = questions
  .map((q) => ({ q, r: rand() }))
  .sort((x, y) => x.r - y.r)
  .slice(0, QUESTIONS)
  .map(({ q }) => q);

const embedder = await createEmbedder(loadConfig({ ...process.env, DATA_DIR: 'memory://', LOG_LEVEL: 'silent' }));
try {
  console.log(`${sentences.length} sentences of ${squad.data.length} articles, ${sample.length} of ${questions.length} questions, embedder ${embedder.id}`);
  const embedAll = async (texts: string[]) => {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += 256) out.push(...(await embedder.embed(texts.slice(i, i + 256))));
    return out;
  };
  const sentenceVectors = await embedAll(sentences.map((s) => s.text));
  const questionVectors = await embedAll(sample.map((q) => q.text));
  const vectorOf = new Map(sentences.map((s, i) => [s.id, sentenceVectors[i]!]));
  const byArticle = new Map<number, number[]>();
  sentences.forEach((s, i) => byArticle.set(s.article, [...(byArticle.get(s.article) ?? []), i]));
  const indexes = new Map<number, InMemoryBm25Index>();
  for (const [article, members] of byArticle) {
    const index = new InMemoryBm25Index();
    for (const i of members) index.add(sentences[i]!.id, sentences[i]!.text);
    indexes.set(article, index);
  }
  const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
  const lists = sample.map((q, qi) => {
    const members = byArticle.get(q.article)!;
    const vector = members
      .map((i) => ({ id: sentences[i]!.id, s: dot(sentenceVectors[i]!, questionVectors[qi]!) }))
      .sort((x, y) => y.s - x.s)
      .slice(0, CANDIDATES)
      .map((x) => x.id);
    const textHits = indexes.get(q.article)!.search(q.text, { topK: CANDIDATES });
    // The query's vector moved toward its nearest sentences' mean, as VectorFeedback does (vector-feedback.ts).
    const feedbackRanked = (turns: number, weight: number) => {
      const nearest = vector.slice(0, turns).map((id) => vectorOf.get(id)!);
      const moved = questionVectors[qi]!.map((x, d) => x + (weight * nearest.reduce((sum, v) => sum + v[d]!, 0)) / nearest.length);
      return members
        .map((i) => ({ id: sentences[i]!.id, s: dot(sentenceVectors[i]!, moved) }))
        .sort((x, y) => y.s - x.s)
        .slice(0, CANDIDATES)
        .map((x) => x.id);
    };
    const feedback = new Map(FEEDBACK.map(([turns, weight]) => [`${turns}/${weight}`, feedbackRanked(turns, weight)]));
    return { q, vector, feedback, text: textHits.map((h) => h.id), textScores: textHits.map((h) => h.score) };
  });
  const recallAt = (ranked: (l: (typeof lists)[number]) => string[], n: number) =>
    lists.reduce(
      (sum, l) =>
        sum +
        (ranked(l)
          .slice(0, n)
          .some((id) => l.q.relevant.has(id))
          ? 1
          : 0),
      0,
    ) / lists.length;
  const mrr = (ranked: (l: (typeof lists)[number]) => string[]) =>
    lists.reduce((sum, l) => {
      const r = ranked(l).findIndex((id) => l.q.relevant.has(id));
      return sum + (r === -1 || r >= 10 ? 0 : 1 / (r + 1));
    }, 0) / lists.length;
  const row = (name: string, ranked: (l: (typeof lists)[number]) => string[]) =>
    console.log(`| ${name} | ${recallAt(ranked, 5).toFixed(4)} | ${recallAt(ranked, 10).toFixed(4)} | ${mrr(ranked).toFixed(4)} |`);
  console.log('| retriever | hit@5 | hit@10 | MRR@10 |\n| --- | --- | --- | --- |');
  row('BM25 alone', (l) => l.text);
  row('vector alone', (l) => l.vector);
  for (const k of [20, 60]) {
    for (const w of [0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 1, 1.5, 2]) {
      row(`vector ${w}, text 1, k ${k}`, (l) =>
        fuse(
          [
            { ids: l.vector, weight: w },
            { ids: l.text, weight: 1 },
          ],
          k,
        ).map((h) => h.id),
      );
    }
  }
  for (const [turns, weight] of FEEDBACK) {
    const key = `${turns}/${weight}`;
    row(`vector with feedback ${key} alone`, (l) => l.feedback.get(key)!);
    for (const w of [0.25, 0.5, 1]) {
      row(`vector 0.5, feedback ${key} ${w}, text 1, k 20`, (l) =>
        fuse(
          [
            { ids: l.vector, weight: 0.5 },
            { ids: l.feedback.get(key)!, weight: w },
            { ids: l.text, weight: 1 },
          ],
          20,
        ).map((h) => h.id),
      );
    }
    for (const w of [0.5, 1, 1.5, 2]) {
      row(`vector with feedback ${key} ${w}, text 1, k 20`, (l) =>
        fuse(
          [
            { ids: l.feedback.get(key)!, weight: w },
            { ids: l.text, weight: 1 },
          ],
          20,
        ).map((h) => h.id),
      );
    }
  }
  // The conversation prior (conversation-prior.ts), a sentence's paragraph standing for its
  // session: paragraphs ranked as groupBy "conversation" ranks sessions (CONVERSATION_FUSION_WEIGHTS
  // over the list fused with the 10/3 feedback), then each sentence keyed by its place and its
  // paragraph's share of the best paragraph's score past the kept ones, and the diversity pick on
  // the keys.
  const paragraphOf = (id: string) => id.slice(0, id.lastIndexOf('/'));
  const rankable = (fused: ReturnType<typeof fuse>) =>
    fused
      .slice(0, CANDIDATES)
      .map((h) => ({ id: h.id, conversationId: paragraphOf(h.id), score: h.score, ranks: { vector: h.ranks[0] ?? null, text: h.ranks[1] ?? null } }));
  for (const kept of [0, 3, 4, 5]) {
    for (const prior of [0, 2, 2.5, 3, 4]) {
      row(`vector 0.5, text 1, k 20, diversity, conversation prior ${prior}, ${kept} kept`, (l) => {
        const hits = rankable(
          fuse(
            [
              { ids: l.vector, weight: 0.5 },
              { ids: l.text, weight: 1 },
            ],
            20,
          ),
        );
        const fed = rankable(
          fuse(
            [
              { ids: l.feedback.get('10/3')!, weight: 0.5 },
              { ids: l.text, weight: 1 },
            ],
            20,
          ),
        );
        const standings = conversationStandings(rankConversations(fed));
        return orderByConversations(hits, { standings, prior, kept }).map((h) => h.id);
      });
    }
  }
  // A BM25 floor: text candidates scoring under `floor` × the best one's score (a match on one
  // common query word) leave the text list, so they cannot outrank good vector candidates.
  for (const floor of [0.2, 0.35, 0.5]) {
    for (const [w, k] of [
      [0.3, 20],
      [0.5, 20],
      [1, 20],
      [1, 60],
    ] as const) {
      row(`floor ${floor}, vector ${w}, text 1, k ${k}`, (l) => {
        const top = l.textScores[0] ?? 0;
        const text = l.text.filter((_, i) => l.textScores[i]! >= floor * top);
        return fuse(
          [
            { ids: l.vector, weight: w },
            { ids: text, weight: 1 },
          ],
          k,
        ).map((h) => h.id);
      });
    }
  }
} finally {
  await embedder.close();
}
