import { LEANING, lexicalCandidates } from '../../../../src/chat/extractive/extractive-answer.js';
import { lexicalFeatures } from '../../../../src/chat/extractive/sentence-features.js';
import { contentTerms } from '../../../../src/chat/extractive/answer-terms.js';
import { experimentalFeatures, loadWordNet, softMatch, surfaceWords, wordNetMatch } from '../extractive-experiments.js';
import { cachingEmbedder } from '../vector-cache.js';
import { createEmbedder } from '../../../../src/embeddings/create-embedder.js';
import { loadConfig } from '../../../../src/config/config.js';
import { type RawRow, loadRaw } from '../extractive-raw.js';
import { answers, loadSquad } from '../squad.js';
import { QUESTIONS, SEED, FILE, HEAD_WORDS, BASE_KEYS, K, col, derive, type Row, type Features } from './tuning-columns.js';

// Each question's candidates as feature rows, computed by the chat's own code from the cached raw set.
export const raw = await loadRaw(QUESTIONS, SEED, FILE);
/** TUNING_SOFT=1: the bundled model's vector of every word of the questions and candidates, unit length. */
const wordVectors = process.env.TUNING_SOFT ? await embedWords(raw) : undefined;
async function embedWords(set: typeof raw): Promise<Map<string, Float32Array>> {
  const words = new Set<string>();
  for (const r of [...set.own, ...set.other]) {
    for (const w of surfaceWords(r.question)) words.add(w);
    for (const c of lexicalCandidates(r.question, r.sources)) for (const w of surfaceWords(c.text)) words.add(w);
  }
  const list = [...words];
  const embedder = cachingEmbedder(await createEmbedder(loadConfig({ ...process.env, LOG_LEVEL: 'silent', DATA_DIR: 'memory://' })));
  const vectors = new Map<string, Float32Array>();
  for (let i = 0; i < list.length; i += 256) {
    const batch = list.slice(i, i + 256);
    (await embedder.embed(batch)).forEach((v, j) => {
      const norm = Math.hypot(...v);
      vectors.set(
        batch[j]!,
        Float32Array.from(v, (x) => x / norm),
      );
    });
  }
  await embedder.close();
  console.log(`${list.length} words embedded`);
  return vectors;
}
/** TUNING_WORDNET=1 (Debian's wordnet-base installed): WordNet relatives as matches. */
const related = process.env.TUNING_WORDNET ? loadWordNet('/usr/share/wordnet', Number(process.env.TUNING_WORDNET_SENSES ?? 3)) : undefined;
const EXPERIMENTAL = ['variant', 'entity', 'after', 'global'] as const;
const extraNamed = new Set((process.env.TUNING_EXTRA ?? '').split(/[;,]/));
let corpusIdfOnce: ((t: string) => number) | undefined;
/** IDF over every paragraph of the tuning file: the corpus the documents' own BM25 index holds. Built on first use. */
function corpusIdf(): (t: string) => number {
  if (corpusIdfOnce) return corpusIdfOnce;
  const paragraphs = loadSquad().paragraphs;
  const df = new Map<string, number>();
  for (const p of paragraphs) for (const t of new Set(contentTerms(p.context))) df.set(t, (df.get(t) ?? 0) + 1);
  corpusIdfOnce = (t: string) => Math.log(1 + (paragraphs.length - (df.get(t) ?? 0) + 0.5) / ((df.get(t) ?? 0) + 0.5));
  return corpusIdfOnce;
}
/**
 * What the answer shows for a candidate: a sentence opening with a pronoun comes after the sentence
 * before it (extractiveAnswer), so that pair is what must hold the answer. TUNING_LABEL=sentence
 * counts the sentence alone, as the figures before this did.
 */
export const shown = (c: { text: string; previous?: { text: string } }) =>
  process.env.TUNING_LABEL !== 'sentence' && c.previous && LEANING.test(c.text) ? `${c.previous.text} ${c.text}` : c.text;
const rowOf = (r: RawRow, article: number): Row => {
  const candidates = lexicalCandidates(r.question, r.sources);
  const x = new Float64Array(candidates.length * K);
  candidates.forEach((c, j) => BASE_KEYS.forEach((k, i) => (x[j * K + i] = k === 'cosine' ? (r.cosines[c.text] ?? 0) : c.features[k])));
  // lean: the previous sentence's BM25 when this one opens with a pronoun (it is shown with it).
  candidates.forEach((c, j) => (x[j * K + col('lean')] = c.previous && LEANING.test(c.text) ? c.features.context : 0));
  // head: BM25 of the sentence's first words only: a sentence about the question's subject names it first.
  const heads = lexicalFeatures(
    r.question,
    candidates.map((c) => ({ ...c, headingPath: [], text: c.text.split(/\s+/).slice(0, HEAD_WORDS).join(' ') })),
  ).features;
  candidates.forEach((_, j) => (x[j * K + col('head')] = heads[j]!.lexical));
  // chunk: the sentence overlaps the chunk retrieval cited in its passage (the part that matched best).
  const byId = new Map(r.sources.map((s) => [s.id, s]));
  candidates.forEach((c, j) => {
    const s = byId.get(c.sourceId);
    x[j * K + col('chunk')] = s?.kind === 'document' && c.start !== undefined && c.end !== undefined && c.start < s.end && c.end > s.start ? 1 : 0;
  });
  if (wordVectors)
    softMatch(r.question, candidates, (w) => wordVectors.get(w), Number(process.env.TUNING_SOFT_FLOOR ?? 0.5)).forEach((v, j) => (x[j * K + col('soft')] = v));
  if (related) wordNetMatch(r.question, candidates, related).forEach((v, j) => (x[j * K + col('wordnet')] = v));
  // Features tried and not adopted (lib/extractive-experiments.ts), computed only when TUNING_EXTRA names one.
  if (EXPERIMENTAL.some((k) => extraNamed.has(k))) {
    experimentalFeatures(r.question, candidates, corpusIdf(), Number(process.env.TUNING_PREFIX ?? 5)).forEach((f, j) => {
      for (const k of EXPERIMENTAL) x[j * K + col(k)] = f[k];
    });
  }
  const row = {
    article,
    n: candidates.length,
    x,
    question: r.question,
    gold: r.gold,
    texts: candidates.map((c) => c.text),
    ok: Uint8Array.from(candidates, (c) => (answers(shown(c), r.gold) ? 1 : 0)),
  };
  derive(row);
  return row;
};
export const features: Features = {
  own: raw.own.map((r) => rowOf(r, r.article)),
  other: raw.other.map((r, i) => rowOf(r, raw.own[i]!.article)),
};
