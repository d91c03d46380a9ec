export interface Range {
  start: number;
  end: number;
}

/**
 * `text` with the given ranges in <mark>. The ranges are offsets in a larger text (a document's)
 * of which `text` starts at `offset`, as citations give them; parts outside `text` are ignored.
 */
export function MarkedText({ text, offset, ranges }: { text: string; offset: number; ranges: readonly Range[] }) {
  const local = ranges
    .map((r) => ({ start: Math.max(0, r.start - offset), end: Math.min(text.length, r.end - offset) }))
    .filter((r) => r.end > r.start)
    .sort((a, b) => a.start - b.start);
  const parts = [];
  let at = 0;
  for (const r of local) {
    if (r.start < at) continue;
    if (r.start > at) parts.push(text.slice(at, r.start));
    parts.push(<mark key={r.start}>{text.slice(r.start, r.end)}</mark>);
    at = r.end;
  }
  parts.push(text.slice(at));
  return <>{parts}</>;
}

/** `10-20,30-40` (a link's `quotes` parameter) → ranges. */
export function parseRanges(text: string | null): Range[] {
  if (!text) return [];
  return text.split(',').flatMap((pair) => {
    const [start, end] = pair.split('-').map(Number);
    return Number.isInteger(start) && Number.isInteger(end) ? [{ start: start!, end: end! }] : [];
  });
}

export function formatRanges(ranges: readonly Range[]): string {
  return ranges.map((r) => `${r.start}-${r.end}`).join(',');
}
