import type { FeatureWeights } from '../../../../src/chat/extractive/answer-weights.js';

// The run's sizes, and the feature columns of a question's candidate rows.
export const QUESTIONS = Number(process.env.TUNING_QUESTIONS ?? 1500);
export const SEED = Number(process.env.TUNING_SEED ?? 7);
export const FILE = process.env.TUNING_RAW ?? `/tmp/memrag-extractive-raw-${QUESTIONS}-${SEED}.json`;
export const FOLDS = 5;
/** The first words of a sentence the experimental `head` feature reads. */
export const HEAD_WORDS = Number(process.env.TUNING_HEAD_WORDS ?? 8);

export type Key = keyof FeatureWeights;
export const BASE_KEYS: Key[] = ['lexical', 'cosine', 'rank', 'type', 'near', 'bigram', 'context', 'proximity', 'rare', 'length', 'position', 'passage'];
/** Experimental features derived in this script from the others, per question (relative to the other candidates). */
const DERIVED = ['lexrank', 'lexratio', 'cosrank', 'cosratio'] as const;
/** Experimental features computed in this script from the candidates (rowOf). */
const EXTRA = ['lean', 'head', 'chunk', 'variant', 'entity', 'after', 'global', 'soft', 'wordnet'] as const;
export type AnyKey = Key | (typeof DERIVED)[number] | (typeof EXTRA)[number];
export const KEYS: AnyKey[] = [...BASE_KEYS, ...DERIVED, ...EXTRA];
export const K = KEYS.length;
export const COSINE = KEYS.indexOf('cosine');
export const col = (k: AnyKey) => KEYS.indexOf(k);
/** Fills the derived columns of a row from its base columns. */
export function derive(row: { n: number; x: Float64Array }) {
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
export interface Row {
  /** The question's own article: the folds split by it. */
  article: number;
  n: number;
  question?: string;
  gold?: string[];
  texts?: string[];
  x: Float64Array;
  ok: Uint8Array;
}
export interface Features {
  own: Row[];
  other: Row[];
}
export type Vector = Float64Array;
