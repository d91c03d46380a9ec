/**
 * Tunes the extractive answer's weights (src/chat/extractive/answer-weights.ts) on SQuAD v1.1's tuning
 * articles. What retrieval recalls for each question (topK 5, `tagsAny` its article, and another
 * article's for declining) and the cosine of every candidate sentence are computed once and cached
 * in TUNING_RAW (lib/extractive-raw.ts); the features are recomputed from them by the chat's own
 * code on each run, so a feature changed in src/chat is measured without retrieval or the model
 * (the cross-validated fits take minutes on two shared cores; TUNING_SKIP_ABLATIONS=1 and
 * TUNING_SKIP_N=1 leave out the ablations and the embedded-sentence counts). Experiments:
 * TUNING_EXPERIMENTS=linear,mlp,ratio,types,misses (TUNING_N sentences embedded, default the chat's;
 * TUNING_ITERATIONS the fit's, default 400: at 1,000 the shipped features cross-validate 0.5 points
 * lower with the embedder, so a gain under that is within the procedure's own noise).
 *
 * The weights are a linear model fitted to rank an answering sentence first (a softmax over each
 * question's candidates), cross-validated five-fold by article: the figure reported for a set of
 * features is answer@1 on articles its weights were not fitted on.
 *
 * Features tried and not adopted, TUNING_EXTRA="near;near,variant;near,entity;near,after;near,global"
 * (cross-validated answer@1, no embedder / 2 sentences embedded; base + near: 0.781 / 0.791):
 * variant 0.779 / 0.790, entity 0.780 / 0.790, variant + entity 0.779 / 0.789, after 0.781 / 0.791,
 * global 0.783 / 0.782; with TUNING_WORDNET=1 (Debian's wordnet-base), wordnet 0.781 / 0.787 (one
 * sense: 0.781 / 0.789); with TUNING_SOFT=1 (every word embedded alone, cached), soft at
 * TUNING_SOFT_FLOOR 0.4 / 0.5 / 0.65: 0.782 / 0.792, 0.781 / 0.789, 0.780 / 0.791
 * (lib/extractive-experiments.ts says what each is).
 *
 *   npx tsx scripts/bench/extractive-tuning.ts
 *   TUNING_QUESTIONS=800 TUNING_SEED=7 npx tsx scripts/bench/extractive-tuning.ts
 */
import type { AnswerWeights, FeatureWeights } from '../../src/chat/extractive/answer-weights.js';
import { ANSWER_WEIGHTS, LEXICAL_ANSWER_WEIGHTS } from '../../src/chat/extractive/answer-weights.js';
import { DEFAULT_EMBEDDED_SENTENCES, LEANING, lexicalCandidates } from '../../src/chat/extractive/extractive-answer.js';
import { answerTypeOf } from '../../src/chat/extractive/answer-type.js';
import { lexicalFeatures } from '../../src/chat/extractive/sentence-features.js';
import { contentTerms } from '../../src/chat/extractive/answer-terms.js';
import { experimentalFeatures, loadWordNet, softMatch, surfaceWords, wordNetMatch } from './lib/extractive-experiments.js';
import { cachingEmbedder } from './lib/vector-cache.js';
import { createEmbedder } from '../../src/embeddings/create-embedder.js';
import { loadConfig } from '../../src/config/config.js';
import { type RawRow, loadRaw } from './lib/extractive-raw.js';
import { answers, loadSquad } from './lib/squad.js';

const QUESTIONS = Number(process.env.TUNING_QUESTIONS ?? 1500);
const SEED = Number(process.env.TUNING_SEED ?? 7);
const FILE = process.env.TUNING_RAW ?? `/tmp/memrag-extractive-raw-${QUESTIONS}-${SEED}.json`;
const FOLDS = 5;
/** The first words of a sentence the experimental `head` feature reads. */
const HEAD_WORDS = Number(process.env.TUNING_HEAD_WORDS ?? 8);

type Key = keyof FeatureWeights;
const BASE_KEYS: Key[] = ['lexical', 'cosine', 'rank', 'type', 'near', 'bigram', 'context', 'proximity', 'rare', 'length', 'position', 'passage'];
/** Experimental features derived in this script from the others, per question (relative to the other candidates). */
const DERIVED = ['lexrank', 'lexratio', 'cosrank', 'cosratio'] as const;
/** Experimental features computed in this script from the candidates (rowOf). */
const EXTRA = ['lean', 'head', 'chunk', 'variant', 'entity', 'after', 'global', 'soft', 'wordnet'] as const;
type AnyKey = Key | (typeof DERIVED)[number] | (typeof EXTRA)[number];
const KEYS: AnyKey[] = [...BASE_KEYS, ...DERIVED, ...EXTRA];
const K = KEYS.length;
const COSINE = KEYS.indexOf('cosine');
const col = (k: AnyKey) => KEYS.indexOf(k);
/** Fills the derived columns of a row from its base columns. */
function derive(row: { n: number; x: Float64Array }) {
  const { n, x } = row;
  const rankCol = (src: number, dst: number, ratio: number) => {
    let max = 0;
    for (let j = 0; j < n; j++) max = Math.max(max, x[j * K + src]!);
    for (let j = 0; j < n; j++) {
      const v = x[j * K + src]!;
      let higher = 0;
      for (let i = 0; i < n; i++) if (x[i * K + src]! > v) higher++;
      x[j * K + dst] = v > 0 ? 1 / (1 + higher) : 0;
      x[j * K + ratio] = max > 0 ? v / max : 0;
    }
  };
  rankCol(col('lexical'), col('lexrank'), col('lexratio'));
  rankCol(COSINE, col('cosrank'), col('cosratio'));
}

/** One question's candidates: their features as rows of `x` (KEYS' order), whether each answers. */
interface Row {
  /** The question's own article: the folds split by it. */
  article: number;
  n: number;
  question?: string;
  gold?: string[];
  texts?: string[];
  x: Float64Array;
  ok: Uint8Array;
}
interface Features {
  own: Row[];
  other: Row[];
}
type Vector = Float64Array;

const raw = await loadRaw(QUESTIONS, SEED, FILE);
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
const shown = (c: { text: string; previous?: { text: string } }) =>
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
const features: Features = {
  own: raw.own.map((r) => rowOf(r, r.article)),
  other: raw.other.map((r, i) => rowOf(r, raw.own[i]!.article)),
};

const vectorOf = (w: AnswerWeights): Vector => Float64Array.from(KEYS, (k) => (w as unknown as Record<string, number>)[k] ?? 0);
const scoreAt = (row: Row, j: number, w: Vector) => {
  let s = 0;
  for (let i = 0; i < K; i++) s += row.x[j * K + i]! * w[i]!;
  return s;
};

/** The candidates given a vector: the `n` best under `prescore` (as scoreCandidates picks them); the rest have cosine 0. */
function masked(n: number, prescore: Vector | ((row: Row, j: number) => number), set: Features = features): Features {
  const score = typeof prescore === 'function' ? prescore : (row: Row, j: number) => scoreAt(row, j, prescore);
  const mask = (row: Row): Row => {
    if (n >= row.n) return row;
    const order = Array.from({ length: row.n }, (_, j) => j).sort((a, b) => score(row, b) - score(row, a) || a - b);
    const x = Float64Array.from(row.x);
    for (const j of order.slice(n)) x[j * K + COSINE] = 0;
    const out = { ...row, x };
    derive(out);
    return out;
  };
  return { own: set.own.map(mask), other: set.other.map(mask) };
}
const withoutCosine = (set: Features): Features => masked(0, new Float64Array(K), set);

/** The top candidate (ties to the earlier: better-ranked source, then document order) and its score. */
function best(row: Row, w: Vector) {
  let top = -1;
  let topScore = -Infinity;
  for (let j = 0; j < row.n; j++) {
    const s = scoreAt(row, j, w);
    if (s > topScore) [top, topScore] = [j, s];
  }
  return { ok: top >= 0 && row.ok[top] === 1, score: topScore, top };
}

const thresholdFor = (otherScores: number[], share: number) => {
  const sorted = [...otherScores].sort((a, b) => a - b);
  return sorted[Math.ceil(share * sorted.length) - 1]! + 1e-6;
};

/** answer@1 without declining; θ80, the lowest threshold declining ≥ 80% of questions asked of another article; answer@1 declining below it. */
function evaluate(w: Vector, set: Features = features) {
  const own = set.own.map((r) => best(r, w));
  const other = set.other.map((r) => best(r, w));
  const at1 = own.filter((o) => o.ok).length / own.length;
  const threshold = thresholdFor(
    other.map((o) => o.score),
    0.8,
  );
  const at1Declining = own.filter((o) => o.ok && o.score >= threshold).length / own.length;
  return { at1, threshold, at1Declining };
}

const fmt = (x: number) => x.toFixed(3);
const weightsText = (w: Vector) =>
  KEYS.map((k, i) => [k, w[i]!] as const)
    .filter(([, v]) => v !== 0)
    .map(([k, v]) => `${k} ${+v.toFixed(3)}`)
    .join(', ');
const show = (label: string, w: Vector, set?: Features) => {
  const r = evaluate(w, set);
  console.log(
    `${label.padEnd(44)} answer@1 ${fmt(r.at1)} | θ80 ${fmt(r.threshold)}: answer@1 ${fmt(r.at1Declining)} (${((r.at1Declining - r.at1) * 100).toFixed(1)}) | ${weightsText(w)}`,
  );
  return r;
};
const unit = (key: AnyKey) => Float64Array.from(KEYS, (k) => (k === key ? 1 : 0));

/**
 * A linear model fitted by gradient descent (Adam) on the softmax over each question's candidates,
 * the answering ones together as the target: it ranks an answering sentence first. (Coordinate
 * ascent on answer@1 from there gained in-sample, 0.789, and lost cross-validated, 0.775: it
 * overfits.) Features not in `keys` keep weight 0. Scaled so `lexical` is 1, as the constants are written.
 */
function fit(rows: readonly Row[], keys: readonly AnyKey[], iterations = Number(process.env.TUNING_ITERATIONS ?? 400), l2 = 1e-3): Vector {
  const usable = rows.filter((r) => r.ok.some((o) => o === 1) && r.ok.some((o) => o === 0));
  const on = Float64Array.from(KEYS, (k) => (keys.includes(k) ? 1 : 0));
  const w = unit('lexical');
  const m = new Float64Array(K);
  const v = new Float64Array(K);
  const rate = 0.05;
  const s = new Float64Array(256);
  for (let t = 1; t <= iterations; t++) {
    const grad = Float64Array.from(w, (x) => l2 * x);
    for (const r of usable) {
      let max = -Infinity;
      for (let j = 0; j < r.n; j++) max = Math.max(max, (s[j] = scoreAt(r, j, w)));
      const { all, okSum } = softmaxMass(s, r, max);
      for (let j = 0; j < r.n; j++) {
        const g = (s[j]! / all - (r.ok[j] ? s[j]! / okSum : 0)) / usable.length;
        for (let i = 0; i < K; i++) grad[i]! += g * r.x[j * K + i]!;
      }
    }
    for (let i = 0; i < K; i++) {
      if (!on[i]) continue;
      m[i] = 0.9 * m[i]! + 0.1 * grad[i]!;
      v[i] = 0.999 * v[i]! + 0.001 * grad[i]! * grad[i]!;
      w[i]! -= (rate * (m[i]! / (1 - 0.9 ** t))) / (Math.sqrt(v[i]! / (1 - 0.999 ** t)) + 1e-8);
    }
  }
  const scale = w[KEYS.indexOf('lexical')]!;
  for (let i = 0; i < K; i++) w[i] = w[i]! / scale;
  return w;
}

/** answer@1 and the decline cost on articles the weights were not fitted on (five folds by article). */
function crossValidated(set: Features, keys: readonly AnyKey[], prepare: (part: Features, train: Features) => Features = (s) => s) {
  let right = 0;
  let rightDeclining = 0;
  for (let fold = 0; fold < FOLDS; fold++) {
    const part = (rows: Row[], inFold: boolean) => rows.filter((r) => (r.article % FOLDS === fold) === inFold);
    const train: Features = { own: part(set.own, false), other: part(set.other, false) };
    const test: Features = { own: part(set.own, true), other: part(set.other, true) };
    const w = fit(prepare(train, train).own, keys);
    const threshold = evaluate(w, prepare(train, train)).threshold;
    const scored = prepare(test, train).own.map((r) => best(r, w));
    right += scored.filter((s) => s.ok).length;
    rightDeclining += scored.filter((s) => s.ok && s.score >= threshold).length;
  }
  return { at1: right / set.own.length, at1Declining: rightDeclining / set.own.length };
}

/** A scorer of one candidate of a row: what a fitted model is. */
type Scorer = (row: Row, j: number) => number;

/**
 * A linear model plus a small hidden layer (tanh), fitted like `fit` (softmax over each question's
 * candidates, Adam): interactions between features (an answer-type cue worth more beside a strong
 * match...) that a weighted sum cannot express. Seeded initialisation, so deterministic.
 */
function fitMlp(rows: readonly Row[], keys: readonly AnyKey[], hidden: number, iterations = 300, l2 = 1e-3, seed = 1) {
  const usable = rows.filter((r) => r.ok.some((o) => o === 1) && r.ok.some((o) => o === 0));
  const on = Float64Array.from(KEYS, (k) => (keys.includes(k) ? 1 : 0));
  const H = hidden;
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648 - 0.5) * 0.2;
  const w = fit(
    rows,
    keys.filter((k) => BASE_KEYS.includes(k as Key) || true),
    300,
    l2,
  );
  const a = Float64Array.from({ length: H * K }, (_, i) => (on[i % K] ? random() : 0));
  const c = new Float64Array(H);
  const u = Float64Array.from({ length: H }, () => random());
  const params = [w, a, c, u];
  const m = params.map((p) => new Float64Array(p.length));
  const v = params.map((p) => new Float64Array(p.length));
  const rate = 0.02;
  const s = new Float64Array(512);
  const hid = new Float64Array(512 * H);
  for (let t = 1; t <= iterations; t++) {
    const grads = params.map((p) => Float64Array.from(p, (x) => l2 * x));
    const [gw, ga, gc, gu] = grads as [Float64Array, Float64Array, Float64Array, Float64Array];
    for (const r of usable) {
      let max = -Infinity;
      for (let j = 0; j < r.n; j++) {
        let z = 0;
        for (let i = 0; i < K; i++) z += r.x[j * K + i]! * w[i]!;
        for (let h = 0; h < H; h++) {
          let y = c[h]!;
          for (let i = 0; i < K; i++) y += r.x[j * K + i]! * a[h * K + i]!;
          y = Math.tanh(y);
          hid[j * H + h] = y;
          z += u[h]! * y;
        }
        s[j] = z;
        max = Math.max(max, z);
      }
      const { all, okSum } = softmaxMass(s, r, max);
      for (let j = 0; j < r.n; j++) {
        const g = (s[j]! / all - (r.ok[j] ? s[j]! / okSum : 0)) / usable.length;
        if (g === 0) continue;
        for (let i = 0; i < K; i++) gw[i]! += g * r.x[j * K + i]!;
        for (let h = 0; h < H; h++) {
          const y = hid[j * H + h]!;
          gu[h]! += g * y;
          const gy = g * u[h]! * (1 - y * y);
          gc[h]! += gy;
          for (let i = 0; i < K; i++) ga[h * K + i]! += gy * r.x[j * K + i]!;
        }
      }
    }
    params.forEach((p, pi) => {
      for (let i = 0; i < p.length; i++) {
        if (pi === 0 && !on[i]) continue;
        if (pi === 1 && !on[i % K]) continue;
        const g = grads[pi]![i]!;
        m[pi]![i] = 0.9 * m[pi]![i]! + 0.1 * g;
        v[pi]![i] = 0.999 * v[pi]![i]! + 0.001 * g * g;
        p[i]! -= (rate * (m[pi]![i]! / (1 - 0.9 ** t))) / (Math.sqrt(v[pi]![i]! / (1 - 0.999 ** t)) + 1e-8);
      }
    });
  }
  const score: Scorer = (r, j) => {
    let z = 0;
    for (let i = 0; i < K; i++) z += r.x[j * K + i]! * w[i]!;
    for (let h = 0; h < H; h++) {
      let y = c[h]!;
      for (let i = 0; i < K; i++) y += r.x[j * K + i]! * a[h * K + i]!;
      z += u[h]! * Math.tanh(y);
    }
    return z;
  };
  return { score, w, a, c, u };
}

function topOf(row: Row, score: Scorer) {
  let top = -1;
  let topScore = -Infinity;
  for (let j = 0; j < row.n; j++) {
    const s = score(row, j);
    if (s > topScore) [top, topScore] = [j, s];
  }
  return { ok: top >= 0 && row.ok[top] === 1, score: topScore, top };
}

// The thresholds around θ80 for the weights chosen (src/chat/extractive/answer-weights.ts), with the vectors
// the chat computes: declining more than 80% leaves room for another sample of questions.
function weightsInSource(lexicalOnly: Features) {
  console.log('\nthe weights in src/chat/extractive/answer-weights.ts:');
  for (const [label, w, chosen] of [
    ['ANSWER_WEIGHTS', ANSWER_WEIGHTS, masked(DEFAULT_EMBEDDED_SENTENCES, scorerOf(LEXICAL_ANSWER_WEIGHTS))],
    ['LEXICAL_ANSWER_WEIGHTS, no embedder', LEXICAL_ANSWER_WEIGHTS, lexicalOnly],
  ] as const) {
    const scorer = scorerOf(w);
    const base = chosen.own.filter((r) => topOf(r, scorer).ok).length / chosen.own.length;
    console.log(`${label}: answer@1 ${fmt(base)} without declining | ${weightsText(vectorOf(w))}`);
    const confidence = (row: Row) => {
      const t = topOf(row, scorer);
      let score = t.score;
      for (const [k, b] of Object.entries(w.confidence)) score += t.top >= 0 ? b * row.x[t.top * K + KEYS.indexOf(k as Key)]! : 0;
      return { ok: t.ok, score };
    };
    const own = chosen.own.map(confidence);
    const other = chosen.other.map(confidence);
    for (const share of [0.8, 0.82, 0.85, 0.88, 0.9]) {
      const theta = thresholdFor(
        other.map((o) => o.score),
        share,
      );
      const at1 = own.filter((o) => o.ok && o.score >= theta).length / own.length;
      console.log(`  θ ${fmt(theta)}: declined ${fmt(share)} of other-article questions, answer@1 ${fmt(at1)} (${((at1 - base) * 100).toFixed(1)} points)`);
    }
    const at1 = own.filter((o) => o.ok && o.score >= w.decline).length / own.length;
    console.log(`  θ ${fmt(w.decline)} (set): declined ${fmt(other.filter((o) => o.score < w.decline).length / other.length)}, answer@1 ${fmt(at1)}`);
  }
}

/** The chat's scoreSentence over a row's columns: the weighted sum plus any hidden units. */
/** The chat's weights, or a small network's: tanh hidden units beside the weighted sum (experiments only). */
type NetWeights = AnswerWeights & { hidden?: { bias: number; out: number; weights: Partial<FeatureWeights> }[] };
function scorerOf(w: NetWeights): Scorer {
  const linear = vectorOf(w);
  const units = (w.hidden ?? []).map((u) => ({ bias: u.bias, out: u.out, a: vectorOf(u.weights as AnswerWeights) }));
  return (r, j) => {
    let z = scoreAt(r, j, linear);
    for (const u of units) z += u.out * Math.tanh(u.bias + scoreAt(r, j, u.a));
    return z;
  };
}

/** Cross-validated answer@1 of any model (and the 80% decline cost on its own score). */
function crossValidatedModel(set: Features, train: (rows: Row[]) => Scorer, prepare: (part: Features, train: Features) => Features = (s) => s) {
  let right = 0;
  let rightDeclining = 0;
  for (let fold = 0; fold < FOLDS; fold++) {
    const part = (rows: Row[], inFold: boolean) => rows.filter((r) => (r.article % FOLDS === fold) === inFold);
    const tr: Features = { own: part(set.own, false), other: part(set.other, false) };
    const te: Features = { own: part(set.own, true), other: part(set.other, true) };
    const ptr = prepare(tr, tr);
    const score = train(ptr.own);
    const threshold = thresholdFor(
      ptr.other.map((r) => topOf(r, score).score),
      0.8,
    );
    const scored = prepare(te, tr).own.map((r) => topOf(r, score));
    right += scored.filter((x) => x.ok).length;
    rightDeclining += scored.filter((x) => x.ok && x.score >= threshold).length;
  }
  return { at1: right / set.own.length, at1Declining: rightDeclining / set.own.length };
}

if (process.env.TUNING_EXPERIMENTS) {
  const lexicalOnly = withoutCosine(features);
  const baseKeys: AnyKey[] = ['lexical', 'rank', 'type', 'bigram', 'context', 'proximity', 'rare', 'length', 'position', 'passage'];
  const dropped = (process.env.TUNING_MLP_DROP ?? '').split(',');
  const mlpKeys: AnyKey[] = [...baseKeys, ...((process.env.TUNING_MLP_EXTRA ?? '').split(',').filter(Boolean) as AnyKey[])].filter((k) => !dropped.includes(k));
  const embedded = (n: number) => (part: Features, train: Features) => masked(n, fit(withoutCosine(train).own, baseKeys), part);
  // The sentences embedded in the experiments: the chat's count unless TUNING_N says otherwise.
  const N = Number(process.env.TUNING_N ?? DEFAULT_EMBEDDED_SENTENCES);
  const report = (label: string, r: { at1: number; at1Declining: number }) =>
    console.log(`${label.padEnd(60)} cv answer@1 ${fmt(r.at1)}, declining 80%: ${fmt(r.at1Declining)} (${((r.at1Declining - r.at1) * 100).toFixed(1)})`);
  const linear = (keys: AnyKey[]) => (rows: Row[]) => {
    const w = fit(rows, keys);
    return (r: Row, j: number) => scoreAt(r, j, w);
  };
  const which = (process.env.TUNING_EXPERIMENTS ?? '').split(',');
  const want = (name: string) => which.includes('all') || which.includes(name);
  if (want('linear')) {
    // TUNING_EXTRA: sets of features added to the base ones, ';' between sets, ',' within one.
    for (const extra of (process.env.TUNING_EXTRA ?? ';near;lexrank,lexratio;near,lexrank,lexratio').split(';')) {
      const keys = [...baseKeys, ...(extra ? (extra.split(',') as AnyKey[]) : [])];
      report(`no embedder, linear, base + ${extra}`, crossValidatedModel(lexicalOnly, linear(keys)));
      const cos = ['cosine', ...keys] as AnyKey[];
      report(`embed ${N}, linear, base + ${extra}`, crossValidatedModel(features, linear(cos), embedded(N)));
      if (process.env.TUNING_COSRANK)
        report(`embed ${N}, linear, base + ${extra} + cosrank,cosratio`, crossValidatedModel(features, linear([...cos, 'cosrank', 'cosratio']), embedded(N)));
    }
  }
  if (want('mlp')) {
    const hs = (process.env.TUNING_HIDDEN ?? '4,8').split(',').map(Number);
    const l2s = (process.env.TUNING_L2 ?? '0.001').split(',').map(Number);
    for (const h of hs)
      for (const l2 of l2s) {
        report(
          `no embedder, mlp ${h} l2 ${l2}, ${mlpKeys.length} features`,
          crossValidatedModel(lexicalOnly, (rows) => fitMlp(rows, mlpKeys, h, 300, l2).score),
        );
        report(
          `embed ${N}, mlp ${h} l2 ${l2}, ${mlpKeys.length} features`,
          crossValidatedModel(features, (rows) => fitMlp(rows, ['cosine', ...mlpKeys], h, 300, l2).score, embedded(N)),
        );
      }
  }
  if (want('ratio')) {
    // The fit with the cosine's weight held at a share of the BM25 weight (TUNING_RATIO, ',' between
    // values): how much a larger cosine weight than the free fit's costs.
    const keys: AnyKey[] = [...baseKeys, 'near'];
    const lex = col('lexical');
    const tied = (ratio: number) => (rows: Row[]) => {
      const moved = rows.map((r) => {
        const x = Float64Array.from(r.x);
        for (let j = 0; j < r.n; j++) x[j * K + lex]! += ratio * x[j * K + COSINE]!;
        return { ...r, x };
      });
      const w = fit(moved, keys);
      w[COSINE] = ratio;
      return (r: Row, j: number) => scoreAt(r, j, w);
    };
    for (const ratio of (process.env.TUNING_RATIO ?? '0.45,0.56').split(',').map(Number)) {
      report(`embed ${N}, linear, base + near, cosine ${ratio}`, crossValidatedModel(features, tied(ratio), embedded(N)));
      const set = masked(N, fit(lexicalOnly.own, keys));
      const scorer = tied(ratio)(set.own);
      const w = Float64Array.from(KEYS, (_, i) => scorer({ n: 1, x: unit(KEYS[i]!), ok: new Uint8Array(1), article: 0 }, 0));
      console.log(`  in-sample ${fmt(set.own.filter((r) => topOf(r, scorer).ok).length / set.own.length)} | ${weightsText(w)}`);
    }
  }
  if (want('types')) {
    // answer@1 by the kind of answer the question asks for (in-sample fit, no embedder / embedded), beside
    // the share where some candidate answers: where the answer-type cue could do more.
    const kinds = new Map<string, { n: number; lex: number; emb: number; some: number }>();
    const wl = fit(lexicalOnly.own, [...baseKeys, 'near']);
    const set = masked(N, wl);
    const we = fit(set.own, ['cosine', ...baseKeys, 'near']);
    set.own.forEach((r, i) => {
      const kind = answerTypeOf(r.question!);
      const k = kinds.get(kind) ?? { n: 0, lex: 0, emb: 0, some: 0 };
      k.n++;
      if (best(lexicalOnly.own[i]!, wl).ok) k.lex++;
      if (best(r, we).ok) k.emb++;
      if (r.ok.some((o) => o === 1)) k.some++;
      kinds.set(kind, k);
    });
    for (const [kind, k] of [...kinds].sort((a, b) => b[1].n - a[1].n))
      console.log(
        `${kind.padEnd(10)} ${String(k.n).padStart(5)} questions: answer@1 ${fmt(k.lex / k.n)} no embedder, ${fmt(k.emb / k.n)} embedded; some candidate answers ${fmt(k.some / k.n)}`,
      );
  }
  if (want('misses')) {
    // Misses of the in-sample fit (no embedder) where some candidate answers: what the top sentence was instead.
    const w = fit(lexicalOnly.own, [...baseKeys, 'near']);
    let shown = 0;
    for (const r of lexicalOnly.own) {
      const t = best(r, w);
      if (t.ok || !r.ok.some((o) => o === 1) || shown++ >= 30) continue;
      const g = r.ok.indexOf(1);
      const feats = (j: number) =>
        KEYS.slice(0, BASE_KEYS.length)
          .map((k, i) => `${k} ${r.x[j * K + i]!.toFixed(2)}`)
          .join(' ');
      console.log(
        `\nQ: ${r.question} | gold: ${r.gold!.join(' / ')}\n  top : ${r.texts![t.top]}\n        ${feats(t.top)}\n  gold: ${r.texts![g]}\n        ${feats(g)}`,
      );
    }
  }
  for (const spec of (process.env.TUNING_EXPORT ?? '').split(';').filter(Boolean)) {
    // The model fitted on every tuning question, written as the constants of src/chat/extractive/answer-weights.ts.
    const [h, l2, n] = spec.split(',').map(Number) as [number, number, number];
    const set = n > 0 ? masked(n, fit(withoutCosine(features).own, mlpKeys)) : lexicalOnly;
    const keys: AnyKey[] = n > 0 ? ['cosine', ...mlpKeys] : mlpKeys;
    // 0 hidden units: the linear fit itself (lexical scaled to 1).
    const linearW = h > 0 ? undefined : fit(set.own, keys);
    const model = linearW
      ? { w: linearW, a: new Float64Array(0), c: new Float64Array(0), u: new Float64Array(0), score: (r: Row, j: number) => scoreAt(r, j, linearW) }
      : fitMlp(set.own, keys, h, 300, l2);
    const named = (v: Float64Array, offset = 0) => Object.fromEntries(keys.map((k) => [k, +v[offset + KEYS.indexOf(k)]!.toFixed(3)]));
    console.log(`\nexport ${spec}:`);
    console.log(
      JSON.stringify({
        ...named(model.w),
        hidden: Array.from({ length: h }, (_, i) => ({ bias: +model.c[i]!.toFixed(3), weights: named(model.a, i * K), out: +model.u[i]!.toFixed(3) })),
      }),
    );
    const rounded = scorerOf({
      ...(named(model.w) as unknown as NetWeights),
      hidden: Array.from({ length: h }, (_, i) => ({ bias: +model.c[i]!.toFixed(3), weights: named(model.a, i * K), out: +model.u[i]!.toFixed(3) })),
    });
    console.log(
      `in-sample answer@1 ${fmt(set.own.filter((r) => topOf(r, model.score).ok).length / set.own.length)}, rounded ${fmt(set.own.filter((r) => topOf(r, rounded).ok).length / set.own.length)}`,
    );
  }
  process.exit(0);
}

console.log(`${features.own.length} questions (seed ${SEED}); raw in ${FILE}`);
if (process.env.TUNING_ONLY_WEIGHTS) {
  weightsInSource(withoutCosine(features));
  process.exit(0);
}
const lexicalOnly = withoutCosine(features);
show('BM25 over the sentences alone', unit('lexical'));
show(
  'the old no-embedder weights (grid, in-sample)',
  Float64Array.from(KEYS, (k) => ({ lexical: 1, rank: 0.2, type: 0.2, bigram: 0.1, context: 0.1 })[k as string] ?? 0),
  lexicalOnly,
);
const oldKeys: Key[] = ['lexical', 'rank', 'type', 'bigram', 'context'];
const newKeys: Key[] = [...oldKeys, 'proximity', 'rare', 'length', 'position', 'passage'];

const cv = (label: string, set: Features, keys: readonly AnyKey[]) => {
  const r = crossValidated(set, keys);
  console.log(
    `${label.padEnd(44)} cross-validated answer@1 ${fmt(r.at1)}, declining 80%: ${fmt(r.at1Declining)} (${((r.at1Declining - r.at1) * 100).toFixed(1)})`,
  );
  return r;
};
console.log('\nwithout an embedder:');
cv('  fitted, the old features', lexicalOnly, oldKeys);
cv('  fitted, every feature', lexicalOnly, newKeys);
if (!process.env.TUNING_SKIP_ABLATIONS)
  for (const k of newKeys.slice(1))
    cv(
      `  every feature but ${k}`,
      lexicalOnly,
      newKeys.filter((x) => x !== k),
    );
const lexical = fit(lexicalOnly.own, newKeys);
show('  fitted on all 1,500 (in-sample)', lexical, lexicalOnly);

console.log(`\nwith the embedder, the ${DEFAULT_EMBEDDED_SENTENCES} lexically best sentences embedded (prescore: the fit without an embedder):`);
const embedded = (n: number) => (part: Features, train: Features) => masked(n, fit(withoutCosine(train).own, newKeys), part);
for (const n of process.env.TUNING_SKIP_N ? [DEFAULT_EMBEDDED_SENTENCES] : [1, 2, 3, 4, 6, Infinity]) {
  const r = crossValidated(features, ['cosine', ...newKeys], embedded(n));
  console.log(
    `  N = ${String(n).padEnd(8)} cross-validated answer@1 ${fmt(r.at1)}, declining 80%: ${fmt(r.at1Declining)} (${((r.at1Declining - r.at1) * 100).toFixed(1)})`,
  );
}
const set = masked(DEFAULT_EMBEDDED_SENTENCES, lexical);
const full = fit(set.own, ['cosine', ...newKeys]);
show('  fitted on all 1,500 (in-sample)', full, set);

weightsInSource(lexicalOnly);

/**
 * The decline's confidence: the top sentence's score plus extra weight on some of its features
 * (`confidence` in AnswerWeights). Threshold set on four folds' other-article questions to decline
 * 80% of them, answer@1 counted on the fifth's: the cost is measured on articles it was not set on.
 */
function confidenceCost(w: Vector, chosen: Features, extra: Partial<Record<Key, number>>) {
  const conf = (row: Row) => {
    const t = best(row, w);
    let score = t.score;
    for (const [k, b] of Object.entries(extra)) score += t.top >= 0 ? b * row.x[t.top * K + KEYS.indexOf(k as Key)]! : 0;
    return { ok: t.ok, score };
  };
  let right = 0;
  for (let fold = 0; fold < FOLDS; fold++) {
    const theta = thresholdFor(
      chosen.other.filter((r) => r.article % FOLDS !== fold).map((r) => conf(r).score),
      0.8,
    );
    right += chosen.own
      .filter((r) => r.article % FOLDS === fold)
      .map(conf)
      .filter((o) => o.ok && o.score >= theta).length;
  }
  return right / chosen.own.length - evaluate(w, chosen).at1;
}
console.log("\nthe decline's confidence: extra weight on the top sentence's features (cost in points of answer@1, threshold cross-validated):");
for (const [label, w, chosen, keys] of [
  ['without an embedder', lexical, lexicalOnly, ['lexical', 'passage', 'bigram']],
  ['with the embedder', full, set, ['lexical', 'passage', 'cosine']],
] as const) {
  const results: { extra: Partial<Record<Key, number>>; cost: number }[] = [];
  for (const a of [0, 1, 2, 4])
    for (const b of [0, 1, 2, 4])
      for (const c of [0, 1, 2]) {
        const extra = { [keys[0]]: a, [keys[1]]: b, [keys[2]]: c };
        results.push({ extra, cost: confidenceCost(w, chosen, extra) });
      }
  results.sort((x, y) => y.cost - x.cost);
  console.log(
    `  ${label}: none ${(confidenceCost(w, chosen, {}) * 100).toFixed(1)}; best: ${results
      .slice(0, 5)
      .map((r) => `${JSON.stringify(r.extra)} ${(r.cost * 100).toFixed(1)}`)
      .join('; ')}`,
  );
}

/** Exponentiates a question's candidate scores in place (shifted by their max); their total, and the answering ones' part of it. */
function softmaxMass(s: Float64Array, r: { n: number; ok: ArrayLike<boolean | number> }, max: number): { all: number; okSum: number } {
  let all = 0;
  let okSum = 0;
  for (let j = 0; j < r.n; j++) {
    s[j] = Math.exp(s[j]! - max);
    all += s[j]!;
    if (r.ok[j]) okSum += s[j]!;
  }
  return { all, okSum };
}
