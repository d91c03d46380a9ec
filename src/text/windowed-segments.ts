/** A segment of a text and where it starts (a UTF-16 offset), as `Intl.Segmenter` gives it. */
export interface TextSegment {
  segment: string;
  index: number;
  isWordLike?: boolean;
}

/**
 * Text `Intl.Segmenter` reads at once. V8's segment iterator costs time in proportion to the whole
 * string at every segment (quadratic: 32k characters of "Mr. " take 1.5 s in sentences), so text is
 * read in windows of this size instead, each in time bounded by the window.
 */
export const SEGMENT_WINDOW = 1024;

/**
 * The segments of `text` read window by window, in time linear in its length. Each window starts
 * at a boundary; its segments are kept up to the last boundary at or before `settled(window)`, the
 * offset past which text beyond the window could move a boundary, and the next window starts there.
 * A window with no such boundary is doubled until it has one or reaches the end of the text.
 */
export function* windowedSegments(segmenter: Intl.Segmenter, text: string, settled: (part: string) => number, window = SEGMENT_WINDOW): Generator<TextSegment> {
  let start = 0;
  let size = window;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    // Never cut a surrogate pair: half a character is not the character.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end += 1;
    const part = text.slice(start, end);
    const segments = [...segmenter.segment(part)];
    if (end === text.length) {
      for (const segment of segments) yield at(segment, start);
      return;
    }
    const last = settled(part);
    let kept = 0;
    let boundary = 0;
    for (const [i, { segment, index }] of segments.entries()) {
      const after = index + segment.length;
      if (after > last) break;
      kept = i + 1;
      boundary = after;
    }
    if (kept === 0) {
      size *= 2;
      continue;
    }
    for (const segment of segments.slice(0, kept)) yield at(segment, start);
    start += boundary;
    size = window;
  }
}

function at({ segment, index, isWordLike }: Intl.SegmentData, offset: number): TextSegment {
  return isWordLike === undefined ? { segment, index: offset + index } : { segment, index: offset + index, isWordLike };
}

export const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
export const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;
