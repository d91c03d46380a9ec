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
import { DEFAULT_EMBEDDED_SENTENCES } from '../../src/chat/extractive/extractive-answer.js';
import { SEED, FILE, FOLDS, type Key, type AnyKey, KEYS, K, type Row, type Features, type Vector } from './lib/tuning/tuning-columns.js';
import { features } from './lib/tuning/tuning-features.js';
import { masked, withoutCosine, best, thresholdFor, evaluate, fmt, show, unit } from './lib/tuning/tuning-scoring.js';
import { fit, crossValidated } from './lib/tuning/tuning-fits.js';
import { weightsInSource } from './lib/tuning/tuning-models.js';
import { runExperiments } from './lib/tuning/tuning-experiments.js';

if (process.env.TUNING_EXPERIMENTS) runExperiments();

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
