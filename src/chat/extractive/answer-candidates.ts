import { type SentenceSpan, splitSentenceSpans } from '../../text/sentence-split.js';
import { type Source, sourceText } from '../../retrieval/source.js';
import { readsAsSentence } from './answer-sentence.js';

/** A sentence an answer without a model may quote. */
export interface AnswerCandidate {
  sourceId: number;
  /** 1-based rank of its source among the recalled sources of the same kind (retrieval's order). */
  sourceRank: number;
  text: string;
  /** Where it is in the document's text; documents only, for the citation's `quotes`. */
  start?: number;
  end?: number;
  /** Headings above it in its document, read as context when scoring. */
  headingPath: string[];
  /** The sentence before it in the same source, if any. */
  previous?: AnswerCandidate;
}

/**
 * How much of one memory or one past message is read for answer sentences. Splitting and scoring
 * are linear but run on the event loop, and a recorded message may hold a megabyte (300 ms and
 * more of a core): reading a bounded head keeps every chat's cost bounded whatever was stored.
 * A sentence past it is not quoted; its source is still recalled and cited.
 */
export const SOURCE_CHARS_READ = 20_000;

/**
 * The sentences of the recalled sources: a document's whole passage (the answer is often a
 * sentence or two away from the chunk that matched), a memory whole, what a user said in a past turn.
 */
export function answerCandidates(sources: readonly Source[]): AnswerCandidate[] {
  const candidates: AnswerCandidate[] = [];
  const ranks = new Map<Source['kind'], number>();
  for (const source of sources) {
    const sourceRank = (ranks.get(source.kind) ?? 0) + 1;
    ranks.set(source.kind, sourceRank);
    let previous: AnswerCandidate | undefined;
    const push = (candidate: AnswerCandidate) => {
      if (previous) candidate.previous = previous;
      candidates.push(candidate);
      previous = candidate;
    };
    if (source.kind === 'document') {
      const passage = source.passage ?? { start: source.start, text: source.text, sections: [{ start: 0, headingPath: source.headingPath }] };
      for (const whole of splitSentenceSpans(passage.text)) {
        const span = withoutHeadings(whole);
        // A heading or label answers nothing; the sentence after it starts a section, leaning on none before.
        if (!span || !readsAsSentence(span.text)) {
          previous = undefined;
          continue;
        }
        const section = passage.sections.findLast((s) => s.start <= span.start) ?? passage.sections[0];
        push({
          sourceId: source.id,
          sourceRank,
          text: span.text,
          start: passage.start + span.start,
          end: passage.start + span.end,
          headingPath: section?.headingPath ?? source.headingPath,
        });
      }
      continue;
    }
    // A past turn is quoted for what the user said, never for the answer it got: an answer is no
    // source of fact, and one quoted would be quoted again by the next answer, growing each time.
    const said = source.kind === 'turn' ? source.question : sourceText(source);
    for (const span of splitSentenceSpans(said.length > SOURCE_CHARS_READ ? said.slice(0, SOURCE_CHARS_READ) : said)) {
      // A past turn's questions share the most words with a question asked again, and answer nothing.
      if (source.kind === 'turn' && span.text.endsWith('?')) continue;
      // A user's message can carry [n] copied from an answer: quoted now, it would point at this turn's sources.
      const text = source.kind === 'turn' ? withoutCitationMarkers(span.text) : span.text;
      if (text) push({ sourceId: source.id, sourceRank, text, headingPath: [] });
    }
  }
  return candidates;
}

// The Markdown heading lines ("## Priming": one to six #, a space, the rest of the line) a span starts with.
const LEADING_HEADINGS = /^(?:#{1,6}[ \t][^\n]*(?:(?:\n[ \t]*)+|$))+/;

/**
 * A sentence span without the heading lines it starts with, or null when it is only headings.
 * A heading is the context a sentence is scored with (its heading path), never an answer: short
 * and made of the question's words, it outscored the sentences under it.
 */
function withoutHeadings(span: SentenceSpan): SentenceSpan | null {
  const lead = LEADING_HEADINGS.exec(span.text)?.[0].length ?? 0;
  if (lead === 0) return span;
  const text = span.text.slice(lead);
  return text.trim() ? { text, start: span.start + lead, end: span.end } : null;
}

const CITATION_MARKERS = /\s*\[\d{1,4}(?:\s*,\s*\d{1,4})*\]/g;

const withoutCitationMarkers = (text: string): string => text.replace(CITATION_MARKERS, '').trim();
