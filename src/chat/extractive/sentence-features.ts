import type { AnswerCandidate } from './answer-candidates.js';
import { contentTerms, foldAccents, termOf } from './answer-terms.js';
import { type AnswerType, answerTypeOf, answersOfType } from './answer-type.js';

/** What an answer without a model knows about one candidate sentence; each in about [0, 1]. */
export interface SentenceFeatures {
  /** BM25 over the candidate sentences, divided by the most the question's terms could score. */
  lexical: number;
  /** The embedder's cosine between question and sentence; 0 when no vector was computed. */
  cosine: number;
  /** 1 / rank of the sentence's source among the recalled sources of its kind. */
  rank: number;
  /** 1 when the sentence holds what the question's kind asks for (a year for "when"...), else 0. */
  type: number;
  /**
   * How close that answer sits to the question's words in the sentence: 1 / the distance in words
   * from the nearest (1 when adjacent), 0 without one. A date beside "was founded" answers "when was
   * it founded"; a date at the other end of the sentence is often another event's.
   */
  near: number;
  /** Share of the question's adjacent content-word pairs the sentence has adjacent too: phrases, not just words. */
  bigram: number;
  /** The `lexical` of the sentence before it in its source: the answer often follows the sentence naming the subject. */
  context: number;
  /**
   * How close together the question's words sit in the sentence: the matched words' share of the
   * smallest window holding them all, times the share of the question's IDF they carry. A sentence
   * restating the question's phrase answers more often than one with its words scattered.
   */
  proximity: number;
  /** 1 when the sentence has the question's rarest word among those some candidate has. */
  rare: number;
  /** The sentence's length in content words over 40, at most 1: SQuAD's answers sit in long sentences more. */
  length: number;
  /** 1 for the first sentence of its source, 1/2 for the second... */
  position: number;
  /** The share of the question's IDF the sentence's whole source has: the answer sits where the question's words gather. */
  passage: number;
}

const K1 = 1.2;
const B = 0.75;
/**
 * IDF counts at least this many sentences, the missing ones sharing no word with the question.
 * Over two or three sentences (a user with few memories) IDF degenerates: a word every candidate
 * has weighs next to nothing, so one absent question word would outweigh all the words that match.
 */
const MIN_IDF_SENTENCES = 20;

export interface LexicalScoring {
  answerType: AnswerType;
  features: SentenceFeatures[];
}

/**
 * Lexical features of every candidate: BM25 with IDF over the candidate sentences themselves, so
 * a word every passage repeats (the article's subject) weighs little and the rare word the
 * question shares with one sentence decides. A sentence's heading path counts as its context.
 * Divided by the IDF of all the question's terms, terms no candidate has included, the score
 * says how much of the question a sentence covers: the basis for declining.
 */
export function lexicalFeatures(question: string, candidates: readonly AnswerCandidate[]): LexicalScoring {
  const answerType = answerTypeOf(question);
  const terms = [...new Set(contentTerms(question))];
  const bags = candidates.map((c) => contentTerms(c.headingPath.length > 0 ? `${c.headingPath.join(' ')} ${c.text}` : c.text));
  const n = Math.max(bags.length, MIN_IDF_SENTENCES);
  const avgLength = bags.reduce((s, b) => s + b.length, 0) / Math.max(1, bags.length);
  const counts = bags.map((bag) => {
    const m = new Map<string, number>();
    for (const t of bag) m.set(t, (m.get(t) ?? 0) + 1);
    return m;
  });
  const idf = new Map(
    terms.map((t) => {
      const df = counts.filter((m) => m.has(t)).length;
      return [t, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
    }),
  );
  const most = terms.reduce((s, t) => s + idf.get(t)!, 0);
  const asked = contentTerms(question);
  const pairs = new Set(asked.slice(1).map((t, i) => `${asked[i]} ${t}`));
  const present = terms.filter((t) => counts.some((m) => m.has(t)));
  const rarest = present.reduce<string | undefined>((r, t) => (r === undefined || idf.get(t)! > idf.get(r)! ? t : r), undefined);
  const positions = new Map<AnswerCandidate, number>();
  const features: SentenceFeatures[] = candidates.map((c, i) => {
    const position = c.previous ? positions.get(c.previous)! + 1 : 1;
    positions.set(c, position);
    const own = contentTerms(c.text);
    const found = answersOfType(answerType, c.text, question);
    let score = 0;
    for (const t of terms) {
      const tf = counts[i]!.get(t) ?? 0;
      if (tf > 0) score += (idf.get(t)! * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * bags[i]!.length) / Math.max(1, avgLength)));
    }
    return {
      lexical: most > 0 ? score / most : 0,
      cosine: 0,
      rank: 1 / c.sourceRank,
      type: found.length > 0 ? 1 : 0,
      near: found.length > 0 ? nearness(c.text, found, idf) : 0,
      bigram: pairs.size > 0 ? sharedPairs(bags[i]!, pairs) / pairs.size : 0,
      context: 0,
      proximity: most > 0 ? proximity(own, idf) / most : 0,
      rare: rarest !== undefined && counts[i]!.has(rarest) ? 1 : 0,
      length: Math.min(1, own.length / 40),
      position: 1 / position,
      passage: 0,
    };
  });
  const bySource = new Map<number, Set<string>>();
  candidates.forEach((c, i) => {
    const found = bySource.get(c.sourceId) ?? new Set<string>();
    for (const t of terms) if (counts[i]!.has(t)) found.add(t);
    bySource.set(c.sourceId, found);
  });
  candidates.forEach((c, i) => {
    const found = bySource.get(c.sourceId)!;
    features[i]!.passage = most > 0 ? [...found].reduce((s, t) => s + idf.get(t)!, 0) / most : 0;
  });
  const index = new Map(candidates.map((c, i) => [c, i]));
  candidates.forEach((c, i) => {
    const previous = c.previous ? index.get(c.previous) : undefined;
    if (previous !== undefined) features[i]!.context = features[previous]!.lexical;
  });
  return { answerType, features };
}

/**
 * The IDF of the question's words the sentence has, times their count over the length of the
 * smallest window of the sentence holding one of each: the whole IDF when they sit side by side.
 */
function proximity(sentence: readonly string[], idf: ReadonlyMap<string, number>): number {
  const wanted = new Set(sentence.filter((t) => idf.has(t)));
  if (wanted.size === 0) return 0;
  const weight = [...wanted].reduce((s, t) => s + idf.get(t)!, 0);
  if (wanted.size === 1) return weight;
  const inWindow = new Map<string, number>();
  let shortest = Infinity;
  let left = 0;
  for (let right = 0; right < sentence.length; right++) {
    const t = sentence[right]!;
    if (!wanted.has(t)) continue;
    inWindow.set(t, (inWindow.get(t) ?? 0) + 1);
    while (inWindow.size === wanted.size) {
      shortest = Math.min(shortest, right - left + 1);
      const l = sentence[left++]!;
      const n = inWindow.get(l);
      if (n === undefined) continue;
      if (n === 1) inWindow.delete(l);
      else inWindow.set(l, n - 1);
    }
  }
  return (weight * wanted.size) / shortest;
}

/** 1 / the distance in words between the nearest answer match and a question word of the sentence. */
function nearness(sentence: string, found: readonly { index: number; text: string }[], idf: ReadonlyMap<string, number>): number {
  const words = [
    ...foldAccents(sentence)
      .toLowerCase()
      .matchAll(/[\p{L}\p{N}]+/gu),
  ];
  const asked: number[] = [];
  words.forEach((w, i) => {
    if (idf.has(termOf(w[0]))) asked.push(i);
  });
  if (asked.length === 0) return 0;
  let best = 0;
  for (const m of found) {
    const first = words.findIndex((w) => w.index + w[0].length > m.index);
    if (first < 0) continue;
    let last = first;
    while (last + 1 < words.length && words[last + 1]!.index < m.index + m.text.length) last++;
    for (const p of asked) {
      if (p >= first && p <= last) continue;
      const d = p < first ? first - p : p - last;
      best = Math.max(best, 1 / d);
    }
  }
  return best;
}

function sharedPairs(bag: readonly string[], pairs: ReadonlySet<string>): number {
  const found = new Set<string>();
  for (let i = 1; i < bag.length; i++) {
    const pair = `${bag[i - 1]} ${bag[i]}`;
    if (pairs.has(pair)) found.add(pair);
  }
  return found.size;
}
