/**
 * Candidate features tried for the extractive answer and not adopted (extractive-tuning.ts's
 * TUNING_EXTRA measures them cross-validated beside the chat's own): kept so a later attempt starts
 * from their figures rather than from scratch. Each is about [0, 1] like src/chat/extractive/sentence-features.
 */
import { readFileSync } from 'node:fs';
import type { AnswerCandidate } from '../../../src/chat/extractive/answer-candidates.js';
import { contentTerms, foldAccents } from '../../../src/chat/extractive/answer-terms.js';
import type { SentenceFeatures } from '../../../src/chat/extractive/sentence-features.js';

export interface ExperimentalFeatures {
  /**
   * The IDF share of question words the sentence lacks but has another form of, sharing the first
   * `prefix` letters ("invasion"/"invaded", "Normandy"/"Norman"): derivations the stemmer keeps apart.
   */
  variant: number;
  /** The share of the question's capitalised words (past its first) that the sentence has. */
  entity: number;
  /** The `lexical` of the sentence after it in its source: the question's words may run on. */
  after: number;
  /** BM25 with the corpus's IDF (`corpusIdf`) instead of the candidate sentences'. */
  global: number;
}

const K1 = 1.2;
const B = 0.75;
/** Content words of a sentence of the chat's scale, for `global`'s length normalisation. */
const AVERAGE_LENGTH = 20;

export function experimentalFeatures(
  question: string,
  candidates: readonly (AnswerCandidate & { features: SentenceFeatures })[],
  corpusIdf: (term: string) => number,
  prefix = 5,
): ExperimentalFeatures[] {
  const asked = [...new Set(contentTerms(question))];
  const bags = candidates.map((c) => contentTerms(c.headingPath.length > 0 ? `${c.headingPath.join(' ')} ${c.text}` : c.text));
  const sets = bags.map((b) => new Set(b));
  // The chat's IDF over the candidate sentences (at least 20 of them), as lexicalFeatures computes it.
  const n = Math.max(bags.length, 20);
  const idf = new Map(
    asked.map((t) => {
      const df = sets.filter((s) => s.has(t)).length;
      return [t, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
    }),
  );
  const most = asked.reduce((sum, t) => sum + idf.get(t)!, 0);
  const corpusMost = asked.reduce((sum, t) => sum + corpusIdf(t), 0);
  const names = [...new Set((question.match(/(?<=\s)\p{Lu}[\p{L}'-]+/gu) ?? []).flatMap((w) => contentTerms(w)))];
  const next = new Map(candidates.filter((c) => c.previous).map((c) => [c.previous, c]));
  return candidates.map((c, j) => {
    const set = sets[j]!;
    let variant = 0;
    let global = 0;
    for (const t of asked) {
      const tf = bags[j]!.filter((w) => w === t).length;
      if (tf > 0) global += (corpusIdf(t) * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * bags[j]!.length) / AVERAGE_LENGTH));
      else if (t.length >= prefix && [...set].some((w) => w.length >= prefix && w.startsWith(t.slice(0, prefix)))) variant += idf.get(t)!;
    }
    return {
      variant: most > 0 ? variant / most : 0,
      entity: names.length > 0 ? names.filter((t) => set.has(t)).length / names.length : 0,
      after: next.get(c)?.features.lexical ?? 0,
      global: corpusMost > 0 ? global / corpusMost : 0,
    };
  });
}

/** Folded, lower-cased content words of a text as written (not stemmed), for word vectors. */
export function surfaceWords(text: string): string[] {
  return (
    foldAccents(text)
      .toLowerCase()
      .match(/\p{L}+/gu) ?? []
  ).filter((w) => contentTerms(w).length > 0);
}

/** The question's words as written, each with its stem and its IDF over the candidates (the chat's formula), and the candidates' words. */
function questionWords(question: string, candidates: readonly AnswerCandidate[]) {
  const words = [...new Set(surfaceWords(question))];
  const stems = new Map(words.map((w) => [w, contentTerms(w)[0]!]));
  const sentences = candidates.map((c) => [...new Set(surfaceWords(c.text))]);
  const stemSets = candidates.map((c) => new Set(contentTerms(c.text)));
  const n = Math.max(candidates.length, 20);
  const idf = new Map(
    words.map((w) => {
      const df = stemSets.filter((s) => s.has(stems.get(w)!)).length;
      return [w, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
    }),
  );
  const most = words.reduce((sum, w) => sum + idf.get(w)!, 0);
  /** Whether candidate j lacks the word (by stem): only then can a softer match add anything. */
  const lacks = (j: number, w: string) => !stemSets[j]!.has(stems.get(w)!);
  return { words, sentences, idf, most, lacks };
}

/**
 * Soft matching by word vectors (the bundled model's vector of each word alone): for each question
 * word the sentence lacks (by stem), the best cosine to one of the sentence's words above `floor`,
 * rescaled to [0, 1] and weighted by the word's IDF over the candidates; over the question's IDF.
 */
export function softMatch(
  question: string,
  candidates: readonly AnswerCandidate[],
  vectorOf: (word: string) => Float32Array | undefined,
  floor: number,
): number[] {
  const { words, sentences, idf, most, lacks } = questionWords(question, candidates);
  return candidates.map((_, j) => {
    let total = 0;
    for (const w of words) {
      const a = vectorOf(w);
      if (!a || !lacks(j, w)) continue;
      let best = floor;
      for (const u of sentences[j]!) {
        const b = vectorOf(u);
        if (!b) continue;
        let dot = 0;
        for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
        if (dot > best) best = dot;
      }
      total += (idf.get(w)! * (best - floor)) / (1 - floor);
    }
    return most > 0 ? total / most : 0;
  });
}

/**
 * WordNet 3.0 (Debian's wordnet-base, /usr/share/wordnet) as a relation between words: two words
 * are related when a lemma of each shares a synset among its first `senses` senses, or a derivation
 * pointer links those synsets ("store"/"storage", "invade"/"invasion", "capture"/"catch").
 * Experiment only: the chat does not read WordNet.
 */
export function loadWordNet(dir = '/usr/share/wordnet', senses = 3): (a: string, b: string) => boolean {
  const POS = ['noun', 'verb', 'adj', 'adv'] as const;
  const TAG = { noun: 'n', verb: 'v', adj: 'a', adv: 'r' } as const;
  const synsets = new Map<string, Set<string>>();
  const derived = new Map<string, Set<string>>();
  const exceptions = new Map<string, string[]>();
  for (const pos of POS) {
    for (const line of readFileSync(`${dir}/index.${pos}`, 'utf8').split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const f = line.trim().split(' ');
      const lemma = f[0]!;
      const pCnt = Number(f[3]);
      const offsets = f.slice(4 + pCnt + 2).slice(0, senses);
      const set = synsets.get(lemma) ?? new Set<string>();
      for (const o of offsets) set.add(`${TAG[pos]}${o}`);
      synsets.set(lemma, set);
    }
    for (const line of readFileSync(`${dir}/data.${pos}`, 'utf8').split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const f = line.split(' ');
      const id = `${TAG[pos]}${f[0]}`;
      const words = parseInt(f[3]!, 16);
      let i = 4 + words * 2;
      const pointers = Number(f[i]);
      i++;
      for (let p = 0; p < pointers; p++, i += 4) {
        if (f[i] !== '+') continue;
        // A satellite adjective ('s') lives in data.adj.
        const target = `${f[i + 2] === 's' ? 'a' : f[i + 2]}${f[i + 1]}`;
        const set = derived.get(id) ?? new Set<string>();
        set.add(target);
        derived.set(id, set);
      }
    }
    const exc = pos === 'adj' || pos === 'adv' ? pos.slice(0, 3) : pos;
    for (const line of readFileSync(`${dir}/${exc}.exc`, 'utf8').split('\n')) {
      const [form, ...bases] = line.trim().split(' ');
      if (form) exceptions.set(form, [...(exceptions.get(form) ?? []), ...bases]);
    }
  }
  const RULES: [string, string][] = [
    ['s', ''],
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
    ['er', ''],
    ['est', ''],
    ['er', 'e'],
    ['est', 'e'],
  ];
  const lemmas = (w: string) => {
    const out = new Set<string>([w, ...(exceptions.get(w) ?? [])]);
    for (const [suffix, replacement] of RULES) if (w.endsWith(suffix) && w.length > suffix.length + 2) out.add(w.slice(0, -suffix.length) + replacement);
    return [...out].filter((l) => synsets.has(l));
  };
  const memo = new Map<string, Set<string>>();
  const senseSet = (w: string) => {
    let s = memo.get(w);
    if (!s) {
      s = new Set<string>();
      for (const l of lemmas(w)) for (const id of synsets.get(l)!) s.add(id);
      memo.set(w, s);
    }
    return s;
  };
  return (a, b) => {
    const sa = senseSet(a);
    const sb = senseSet(b);
    for (const id of sa) {
      if (sb.has(id)) return true;
      for (const d of derived.get(id) ?? []) if (sb.has(d)) return true;
    }
    return false;
  };
}

/** The IDF share of question words the sentence lacks (by stem) but has a WordNet relative of. */
export function wordNetMatch(question: string, candidates: readonly AnswerCandidate[], related: (a: string, b: string) => boolean): number[] {
  const { words, sentences, idf, most, lacks } = questionWords(question, candidates);
  return candidates.map((_, j) => {
    let total = 0;
    for (const w of words) if (lacks(j, w) && sentences[j]!.some((u) => u !== w && related(w, u))) total += idf.get(w)!;
    return most > 0 ? total / most : 0;
  });
}
