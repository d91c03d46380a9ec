import { type AnswerWeights, type FeatureWeights, ANSWER_WEIGHTS, LEXICAL_ANSWER_WEIGHTS } from '../../../../src/chat/extractive/answer-weights.js';
import { DEFAULT_EMBEDDED_SENTENCES } from '../../../../src/chat/extractive/extractive-answer.js';
import { FOLDS, type Key, KEYS, K, type Row, type Features } from './tuning-columns.js';
import { vectorOf, scoreAt, masked, thresholdFor, fmt, weightsText } from './tuning-scoring.js';
import { type Scorer, topOf } from './tuning-fits.js';

// The thresholds around θ80 for the weights chosen (src/chat/extractive/answer-weights.ts), with the vectors
// the chat computes: declining more than 80% leaves room for another sample of questions.
export function weightsInSource(lexicalOnly: Features) {
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
export type NetWeights = AnswerWeights & { hidden?: { bias: number; out: number; weights: Partial<FeatureWeights> }[] };
export function scorerOf(w: NetWeights): Scorer {
  const linear = vectorOf(w);
  const units = (w.hidden ?? []).map((u) => ({ bias: u.bias, out: u.out, a: vectorOf(u.weights as AnswerWeights) }));
  return (r, j) => {
    let z = scoreAt(r, j, linear);
    for (const u of units) z += u.out * Math.tanh(u.bias + scoreAt(r, j, u.a));
    return z;
  };
}

/** Cross-validated answer@1 of any model (and the 80% decline cost on its own score). */
export function crossValidatedModel(set: Features, train: (rows: Row[]) => Scorer, prepare: (part: Features, train: Features) => Features = (s) => s) {
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
