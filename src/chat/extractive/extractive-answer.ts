import type { Embedder } from '../../embeddings/embedder.js';
import { type AnswerCandidate, answerCandidates } from './answer-candidates.js';
import { askerWords, namingTheAsker } from './asker.js';
import { ANSWER_WEIGHTS, type AnswerWeights, LEXICAL_ANSWER_WEIGHTS, confidenceOf, scoreSentence } from './answer-weights.js';
import { cosine } from '../../util/cosine.js';
import { type SentenceFeatures, lexicalFeatures } from './sentence-features.js';
import type { Source } from '../../retrieval/source.js';

export { queryTerms } from './answer-terms.js';
export { splitSentences } from '../../text/sentence-split.js';

export const NO_LLM_NOTE =
  'No LLM is configured (set LLM_MODEL and LLM_BASE_URL or LLM_API_KEY), so this answer is made of sentences extracted from the sources.';
export const NOTHING_FOUND_ANSWER = 'I could not find anything about that in the saved memories or documents.';
export const NOT_ANSWERED_ANSWER = 'Nothing in the memories or documents answers that question.';

const DEFAULT_MAX_SENTENCES = 3;
/**
 * Sentences given a vector: the lexically best ones. The bundled model takes ~9 ms a sentence on
 * two cores, and a passage's sentences number in the dozens; the rest keep their lexical score.
 */
export const DEFAULT_EMBEDDED_SENTENCES = 2;
const SENTENCE_MAX_CHARS = 500;
const CLOSEST_SOURCES = 3;
/** A sentence opening with one of these leans on the one before it, which is shown with it. */
export const LEANING = /^(?:he|she|it|they|this|these|that|those|his|her|its|their|him|them|such)\b/i;

export interface Quote {
  start: number;
  end: number;
}

export interface ExtractiveAnswer {
  answer: string;
  /**
   * Source ids in the order the answer cites them. The answer's [n] is the n-th of them, not a
   * source's id: citations count from 1 in reading order whatever else was recalled.
   */
  citedIds: number[];
  /** Per cited document source: the character ranges of the quoted sentences in the document's text. */
  quotes: Map<number, Quote[]>;
  /** Nothing answered well enough: the answer says so and cites the closest sources. */
  declined: boolean;
}

export interface ExtractiveOptions {
  maxSentences?: number;
  /** The app's embedder: the cosine between question and sentence catches what shares no word. */
  embedder?: Pick<Embedder, 'embed'>;
  /** The question's vector, when the caller started computing it early (beside retrieval). */
  questionVector?: Promise<number[]>;
  /** How many of the lexically best sentences are embedded; default DEFAULT_EMBEDDED_SENTENCES. */
  embedded?: number;
  /** Default ANSWER_WEIGHTS with an embedder, LEXICAL_ANSWER_WEIGHTS without. */
  weights?: AnswerWeights;
  /** Who asks: the question's "I" and "my" are matched as them (`askerWords`). */
  userId?: string | null;
  signal?: AbortSignal;
}

export interface ScoredCandidate extends AnswerCandidate {
  features: SentenceFeatures;
  /** Candidate order: retrieval order of sources, then document order. */
  order: number;
  /** The sentence was given a vector (its `cosine` is measured, not absent). */
  embedded?: boolean;
}

/**
 * The candidate sentences with their features from words alone (no cosine yet). With `userId`, the
 * question's "I" is matched as the user (`askerWords`), and so is the "I" of their past turns:
 * those words are theirs, and carry the user's name as the context they are scored with.
 */
export function lexicalCandidates(question: string, sources: readonly Source[], userId?: string | null): ScoredCandidate[] {
  const base = answerCandidates(sources);
  const asker = askerWords(userId);
  const asked = namingTheAsker(question, asker);
  if (asker !== undefined && asked !== question) {
    const turns = new Set(sources.filter((s) => s.kind === 'turn').map((s) => s.id));
    for (const c of base) if (turns.has(c.sourceId)) c.headingPath = [asker];
  }
  const { features } = lexicalFeatures(asked, base);
  return base.map((c, i) => ({ ...c, features: features[i]!, order: i }));
}

/**
 * The candidate sentences with their features. Only the lexically best `embedded` get a cosine,
 * in one batch with the question; an embedder that fails leaves them without one.
 */
export async function scoreCandidates(
  question: string,
  sources: readonly Source[],
  options: Pick<ExtractiveOptions, 'embedder' | 'embedded' | 'questionVector' | 'userId' | 'signal'> & { prescore?: AnswerWeights } = {},
): Promise<{ candidates: ScoredCandidate[]; embedded: boolean }> {
  // The embedder gets the question as asked: its vector may be on its way already.
  const candidates = lexicalCandidates(question, sources, options.userId);
  const { embedder } = options;
  const limit = options.embedded ?? DEFAULT_EMBEDDED_SENTENCES;
  if (!embedder || limit <= 0 || candidates.length === 0) return { candidates, embedded: false };
  const prescore = options.prescore ?? LEXICAL_ANSWER_WEIGHTS;
  const chosen = [...candidates].sort((a, b) => scoreSentence(b.features, prescore) - scoreSentence(a.features, prescore) || a.order - b.order).slice(0, limit);
  try {
    const signal = options.signal ? { signal: options.signal } : undefined;
    const texts = chosen.map((c) => c.text);
    let q: number[] | undefined;
    let vectors: number[][];
    if (options.questionVector) [q, vectors] = await Promise.all([options.questionVector, embedder.embed(texts, signal)]);
    else [q, ...vectors] = await embedder.embed([question, ...texts], signal);
    chosen.forEach((c, i) => {
      c.features.cosine = Math.max(0, cosine(q!, vectors[i]!));
      c.embedded = true;
    });
    return { candidates, embedded: true };
  } catch {
    options.signal?.throwIfAborted();
    // The lexical answer is still an answer; an embedder outage must not fail the turn.
    return { candidates, embedded: false };
  }
}

/**
 * An answer without a model: the sentences of the sources that best answer the question, each
 * followed by its [n], or, when even the best is a weak match, a statement that nothing answers
 * with the closest sources cited. Grounded by construction: every word is source text.
 */
export async function extractiveAnswer(question: string, sources: readonly Source[], options: ExtractiveOptions = {}): Promise<ExtractiveAnswer> {
  const maxSentences = options.maxSentences ?? DEFAULT_MAX_SENTENCES;
  const { candidates, embedded } = await scoreCandidates(question, sources, options);
  const weights = options.weights ?? (embedded ? ANSWER_WEIGHTS : LEXICAL_ANSWER_WEIGHTS);
  if (candidates.length === 0) {
    // Recalled, but with nothing to quote (a past turn that only asked): declined, naming them.
    return sources.length === 0 ? { answer: NOTHING_FOUND_ANSWER, citedIds: [], quotes: new Map(), declined: true } : decline([], sources);
  }

  const scored = candidates.map((c) => ({ c, score: scoreSentence(c.features, weights) }));
  // Ties go to the better-ranked source, then to the earlier sentence, so the result is stable.
  scored.sort((a, b) => b.score - a.score || a.c.sourceRank - b.c.sourceRank || a.c.order - b.c.order);
  if (confidenceOf(scored[0]!.c.features, weights) < weights.decline)
    return decline(
      scored.map((s) => s.c),
      sources,
    );

  // A sentence without a vector is judged as an answer without an embedder judges it: held to the
  // embedder's confidence, which counts on a cosine it lacks, the sentences after the embedded
  // ones were mostly left out (bench answer@3 0.862 instead of 0.888 with two embedded).
  const strongEnough = (c: ScoredCandidate) =>
    embedded && !c.embedded
      ? confidenceOf(c.features, LEXICAL_ANSWER_WEIGHTS) >= LEXICAL_ANSWER_WEIGHTS.decline
      : confidenceOf(c.features, weights) >= weights.decline;
  const seen = new Set<string>();
  const picked = scored
    .filter(({ c }, i) => {
      const key = c.text.toLowerCase();
      if ((i > 0 && !strongEnough(c)) || seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .slice(0, maxSentences)
    .map((s) => s.c);

  const quotes = new Map<number, Quote[]>();
  const quote = (c: AnswerCandidate) => {
    if (c.start === undefined || c.end === undefined) return;
    const list = quotes.get(c.sourceId) ?? [];
    if (!list.some((q) => q.start === c.start)) list.push({ start: c.start, end: c.end });
    quotes.set(c.sourceId, list);
  };
  // By source and text: the scored candidates are copies, and `previous` points at the originals.
  const place = (c: AnswerCandidate) => `${c.sourceId}\u0000${c.start ?? ''}\u0000${c.text}`;
  // In reading order: a leaning sentence brings the one before it, which is not shown again later.
  const shown = new Set<string>();
  const parts: string[] = [];
  const citedIds: number[] = [];
  const numberOf = (sourceId: number) => {
    if (!citedIds.includes(sourceId)) citedIds.push(sourceId);
    return citedIds.indexOf(sourceId) + 1;
  };
  for (const c of picked) {
    if (shown.has(place(c))) continue;
    const before = c.previous && LEANING.test(c.text) && !shown.has(place(c.previous)) ? c.previous : undefined;
    if (before) {
      shown.add(place(before));
      quote(before);
    }
    shown.add(place(c));
    quote(c);
    parts.push(`${before ? `${before.text} ` : ''}${truncate(c.text)} [${numberOf(c.sourceId)}]`);
  }
  for (const list of quotes.values()) list.sort((a, b) => a.start - b.start);
  return { answer: parts.join(' '), citedIds, quotes, declined: false };
}

/**
 * Says nothing answers, and names and cites the sources whose sentences came closest, best first;
 * without a sentence to rank, the best recalled.
 */
function decline(ranked: readonly AnswerCandidate[], sources: readonly Source[]): ExtractiveAnswer {
  const byId = new Map(sources.map((s) => [s.id, s]));
  const closest = ranked.length > 0 ? ranked.map((c) => c.sourceId) : sources.map((s) => s.id);
  const citedIds = [...new Set(closest)].slice(0, CLOSEST_SOURCES);
  const named = citedIds.map((id, i) => `${nameOf(byId.get(id))} [${i + 1}]`);
  return { answer: `${NOT_ANSWERED_ANSWER} The closest sources: ${named.join('; ')}.`, citedIds, quotes: new Map(), declined: true };
}

function nameOf(source: Source | undefined): string {
  if (source?.kind === 'document') return `"${[source.title, ...source.headingPath].join(' > ')}"`;
  if (source?.kind === 'memory') return `the memory "${source.key}"`;
  return 'an earlier conversation';
}

function truncate(sentence: string): string {
  return sentence.length <= SENTENCE_MAX_CHARS ? sentence : `${sentence.slice(0, SENTENCE_MAX_CHARS)}…`;
}
