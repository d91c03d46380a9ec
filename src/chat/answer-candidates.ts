import { splitSentenceSpans } from '../text/sentence-split.js';
import { type Source, sourceText } from './sources.js';

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
 * The sentences of the recalled sources: a document's whole passage (the answer is often a
 * sentence or two away from the chunk that matched), a memory whole, a past turn's statements.
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
      for (const span of splitSentenceSpans(passage.text)) {
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
    for (const span of splitSentenceSpans(sourceText(source))) {
      // A past turn's questions share the most words with a question asked again, and answer nothing.
      if (source.kind === 'turn' && span.text.endsWith('?')) continue;
      push({ sourceId: source.id, sourceRank, text: span.text, headingPath: [] });
    }
  }
  return candidates;
}
