/**
 * What the extractive tuning reads, computed once and cached: for each sampled SQuAD question,
 * the sources document search recalls for it (topK 5, `tagsAny` its article, and another article's
 * for declining) and the embedder's cosine between the question and every candidate sentence.
 * Features are then recomputed from this by the chat's own code on every tuning run, so a new
 * feature is measured in seconds, without retrieval or the model.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createAppContext } from '../../../src/app-context.js';
import { answerCandidates } from '../../../src/chat/extractive/answer-candidates.js';
import { cosine } from '../../../src/util/cosine.js';
import { SourceList } from '../../../src/chat/sources.js';
import type { Source } from '../../../src/retrieval/source.js';
import { loadConfig } from '../../../src/config/config.js';
import { createEmbedder } from '../../../src/embeddings/create-embedder.js';
import { DEFAULT_TENANT_ID } from '../../../src/tenancy/tenant-id.js';
import { pooled } from './pooled.js';
import { articleTag, loadSquad, otherArticle, sampleQuestions } from './squad.js';
import { cachingEmbedder } from './vector-cache.js';

export interface RawRow {
  question: string;
  gold: string[];
  /** The article the sources come from (the question's own, or another for declining). */
  article: number;
  sources: Source[];
  /** Cosine between question and each candidate sentence, by the sentence's text. */
  cosines: Record<string, number>;
}

export interface RawSet {
  own: RawRow[];
  other: RawRow[];
}

export async function loadRaw(questionsWanted: number, seed: number, file: string): Promise<RawSet> {
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as RawSet;
  const raw = await computeRaw(questionsWanted, seed);
  writeFileSync(file, JSON.stringify(raw));
  return raw;
}

async function computeRaw(questionsWanted: number, seed: number): Promise<RawSet> {
  const squad = loadSquad();
  const questions = sampleQuestions(squad.questions, questionsWanted, seed);
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
    const rowOf = async (question: string, gold: string[], article: number): Promise<RawRow> => {
      const hits = await search.search(question, { topK: 5, tagsAny: [articleTag(article)], passages: true });
      const list = new SourceList();
      for (const hit of hits) list.addDocument(hit);
      const sources = list.all();
      const texts = [...new Set(answerCandidates(sources).map((c) => c.text))];
      const [q, ...vectors] = await embedder.embed([question, ...texts]);
      const cosines = Object.fromEntries(texts.map((t, i) => [t, Math.max(0, cosine(q!, vectors[i]!))]));
      return { question, gold, article, sources, cosines };
    };
    const own: RawRow[] = [];
    const other: RawRow[] = [];
    let done = 0;
    await pooled(
      questions.map((q, i) => ({ q, i })),
      2,
      async ({ q, i }) => {
        own[i] = await rowOf(q.question, q.answers, q.article);
        other[i] = await rowOf(q.question, q.answers, otherArticle(q.article, squad.titles.length, i));
        if (++done % 100 === 0) console.error(`${done} questions`);
      },
    );
    return { own, other };
  } finally {
    await ctx.close();
  }
}
