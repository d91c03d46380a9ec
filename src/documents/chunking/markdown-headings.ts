export interface MarkdownHeading {
  /** 1 for `#` and `===` underlines, up to 6. */
  level: number;
  /** The heading's text without markers or inline markup. */
  text: string;
  /** Offset of the first character of the heading's first line. */
  start: number;
  /** Offset just past the heading's last line (its setext underline, if any), before the newline. */
  end: number;
}

const ATX = /^ {0,3}(#{1,6})(?=[ \t]|$)(.*)$/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
// Lines that start another block and so cannot be the text of a setext heading.
const NOT_PARAGRAPH = /^(?: {4}|\t| {0,3}(?:[-+*][ \t]|\d{1,9}[.)][ \t]|>|#|\||`{3}|~{3}))/;

/**
 * ATX (`## Title`) and setext (`Title` over `-----`) headings of a Markdown text, skipping fenced
 * code, where a `#` line is a shell comment rather than a section.
 */
export function findMarkdownHeadings(source: string): MarkdownHeading[] {
  const headings: MarkdownHeading[] = [];
  let fence: { char: string; length: number } | undefined;
  let previous: { text: string; start: number; paragraphStart: boolean } | undefined;
  let afterBreak = true;

  for (let start = 0; start <= source.length; ) {
    let end = source.indexOf('\n', start);
    if (end === -1) end = source.length;
    const line = source.slice(start, end).replace(/\r$/, '');
    let current: typeof previous;

    const fenceMatch = FENCE.exec(line);
    if (fence) {
      if (fenceMatch && fenceMatch[1]![0] === fence.char && fenceMatch[1]!.length >= fence.length && line.trim() === fenceMatch[1]) {
        fence = undefined;
      }
      afterBreak = true;
    } else if (fenceMatch) {
      fence = { char: fenceMatch[1]![0]!, length: fenceMatch[1]!.length };
      afterBreak = true;
    } else if (line.trim() === '') {
      afterBreak = true;
    } else {
      const atx = ATX.exec(line);
      const underline = SETEXT_UNDERLINE.exec(line);
      if (atx) {
        headings.push({ level: atx[1]!.length, text: cleanHeadingText(atx[2]!.replace(/(?:^|[ \t]+)#+[ \t]*$/, '')), start, end });
        afterBreak = true;
      } else if (underline && previous?.paragraphStart) {
        headings.push({ level: underline[1]![0] === '=' ? 1 : 2, text: cleanHeadingText(previous.text), start: previous.start, end });
        afterBreak = true;
      } else {
        current = { text: line, start, paragraphStart: afterBreak && !NOT_PARAGRAPH.test(line) };
        afterBreak = false;
      }
    }
    previous = current;
    start = end + 1;
  }
  return headings;
}

/** Heading paths are shown to people and prepended to chunks: links and emphasis markers go. */
function cleanHeadingText(raw: string): string {
  return raw
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\*\*|__|\*|`/g, '')
    .replace(/\\([!-/:-@[-`{-~])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}
