import type { PassageText } from '../retrieval/knowledge.js';

export interface PlacedChunk {
  text: string;
  start: number;
  end: number;
  headingPath: string[];
}

/**
 * A passage's text rebuilt from its chunks (in document order), without reading the document:
 * each chunk is exactly its slice of the document, so overlapping chunks join where they overlap.
 * What no chunk covers (the blank lines and heading lines between sections) becomes spaces and
 * newlines of the same length, so an offset into the passage plus its `start` is an offset into
 * the document, and no sentence runs across a gap.
 */
export function passageText(chunks: readonly PlacedChunk[]): PassageText | undefined {
  const first = chunks[0];
  if (!first) return undefined;
  let text = '';
  let end = first.start;
  const sections: PassageText['sections'] = [];
  for (const chunk of chunks) {
    if (chunk.end <= end && text !== '') continue;
    if (chunk.start > end) text += chunk.start - end === 1 ? '\n' : `\n${' '.repeat(chunk.start - end - 2)}\n`;
    const from = Math.max(chunk.start, end);
    text += chunk.text.slice(from - chunk.start);
    const last = sections.at(-1);
    if (!last || last.headingPath.join('\u0000') !== chunk.headingPath.join('\u0000'))
      sections.push({ start: from - first.start, headingPath: chunk.headingPath });
    end = chunk.end;
  }
  return { start: first.start, text, sections };
}
