import { stemmer } from 'stemmer';
import { type Source, sourceText } from './sources.js';

export const NO_LLM_NOTE =
  'No LLM is configured (set LLM_MODEL and LLM_BASE_URL or LLM_API_KEY), so this answer is made of sentences extracted from the sources.';
export const NOTHING_FOUND_ANSWER = 'I could not find anything about that in the saved memories or documents.';

const DEFAULT_MAX_SENTENCES = 3;
const SENTENCE_MAX_CHARS = 500;

// Question words and glue: matching on them would make every sentence look relevant.
const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have how i if in into is it its ' +
    'me my no not of on or our so than that the their them then there these they this to was we were what when ' +
    'where which who whom why will with would you your about tell know please'
  ).split(' '),
);

export interface ExtractiveAnswer {
  answer: string;
  /** Source ids in the order the answer cites them. */
  citedIds: number[];
}

/** Lower-cased, stemmed content words: "drinks" and "drinking" meet "drink". */
export function queryTerms(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return new Set(words.filter((w) => !STOPWORDS.has(w)).map((w) => stemmer(w)));
}

export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * An answer without a model: the sentences of the sources that share the most query terms, each
 * followed by its [n]. Crude, but it is grounded by construction and keeps the API useful (and
 * testable) on a server with no LLM.
 */
export function extractiveAnswer(query: string, sources: readonly Source[], maxSentences = DEFAULT_MAX_SENTENCES): ExtractiveAnswer {
  const terms = queryTerms(query);
  const candidates: { sentence: string; sourceId: number; overlap: number; sourceScore: number; order: number }[] = [];
  let order = 0;
  for (const source of sources) {
    for (const sentence of splitSentences(sourceText(source))) {
      // A past turn's questions share the most words with a question asked again, and answer nothing.
      if (source.kind === 'turn' && sentence.endsWith('?')) continue;
      const sentenceTerms = queryTerms(sentence);
      let overlap = 0;
      for (const term of terms) if (sentenceTerms.has(term)) overlap++;
      if (overlap > 0) candidates.push({ sentence, sourceId: source.id, overlap, sourceScore: source.score, order: order++ });
    }
  }
  if (candidates.length === 0) return { answer: NOTHING_FOUND_ANSWER, citedIds: [] };

  // Ties go to the better-ranked source, then to the earlier sentence, so the result is stable.
  candidates.sort((a, b) => b.overlap - a.overlap || b.sourceScore - a.sourceScore || a.order - b.order);
  const seen = new Set<string>();
  const picked = candidates.filter((c) => {
    const normalized = c.sentence.toLowerCase();
    if (seen.has(normalized)) return false;
    seen.add(normalized);
    return true;
  }).slice(0, maxSentences);

  const answer = picked.map((c) => `${truncate(c.sentence)} [${c.sourceId}]`).join(' ');
  const citedIds = [...new Set(picked.map((c) => c.sourceId))];
  return { answer, citedIds };
}

function truncate(sentence: string): string {
  return sentence.length <= SENTENCE_MAX_CHARS ? sentence : `${sentence.slice(0, SENTENCE_MAX_CHARS)}…`;
}
