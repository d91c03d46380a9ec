import { type CitedOrigin, type DocumentSource, type MemorySource, type Source, type TurnSource, sourceText } from '../retrieval/source.js';

const SNIPPET_MAX_CHARS = 240;

export type Citation =
  | (Pick<MemorySource, 'id' | 'kind' | 'key' | 'agentId'> & {
      snippet: string;
      /** Where the memory came from: a client shows "you told me this on 3 March" and opens that turn. */
      sources: CitedOrigin[];
    })
  | (Omit<DocumentSource, 'text' | 'score' | 'passage'> & {
      snippet: string;
      /** Character ranges of the sentences an extractive answer quoted, in the document's text. */
      quotes?: { start: number; end: number }[];
    })
  | (Pick<TurnSource, 'id' | 'kind' | 'conversationId' | 'turn'> & { snippet: string });

// [1], [1, 2] and [1,2]; [1][2] is two matches. Models write all three.
const MARKER = /\[(\d{1,4}(?:\s*,\s*\d{1,4})*)\]/g;

/** The source numbers an answer cites, in order of first mention, each once. */
export function citedIds(answer: string): number[] {
  const seen = new Set<number>();
  for (const match of answer.matchAll(MARKER)) {
    for (const part of match[1]!.split(',')) seen.add(Number(part.trim()));
  }
  return [...seen];
}

/**
 * Maps the answer's [n] markers to the sources they name. A number no source has is dropped:
 * a model can invent one, and a citation pointing nowhere is worse than none.
 */
export function extractCitations(answer: string, sources: readonly Source[]): Citation[] {
  const byId = new Map(sources.map((s) => [s.id, s]));
  return citedIds(answer).flatMap((id) => {
    const source = byId.get(id);
    return source ? [toCitation(source)] : [];
  });
}

export function toCitation(source: Source): Citation {
  const snippet = snippetOf(sourceText(source));
  if (source.kind === 'memory') return { id: source.id, kind: 'memory', key: source.key, agentId: source.agentId, snippet, sources: source.sources ?? [] };
  if (source.kind === 'turn') return { id: source.id, kind: 'turn', conversationId: source.conversationId, turn: source.turn, snippet };
  const { id, documentId, title, chunkId, headingPath, start, end } = source;
  return { id, kind: 'document', documentId, title, chunkId, headingPath, start, end, snippet };
}

function snippetOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= SNIPPET_MAX_CHARS) return flat;
  // Cut at a word boundary so the snippet does not end mid-word.
  const cut = flat.slice(0, SNIPPET_MAX_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${space > SNIPPET_MAX_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}
