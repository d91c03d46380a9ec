import * as chrono from 'chrono-node';

/** The span of time a query names, resolved against the moment it is asked. */
export interface TimeWindow {
  from: Date;
  to: Date;
  /** The words it was read from, as the query has them. */
  text: string;
}

const DAY_MS = 86_400_000;

/** How far back "recently" and "lately" reach: no date library reads them. */
export const RECENT_DAYS = 30;

const startOfUtcDay = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));

/** chrono's English parser, taught the two words of the list it lacks as dates. */
const parser = (() => {
  const custom = chrono.en.casual.clone();
  custom.parsers.push({
    pattern: () => /\b(?:recently|lately)\b/i,
    extract: (context, match) => {
      const from = new Date(context.refDate.getTime() - RECENT_DAYS * DAY_MS);
      const to = context.refDate;
      return context.createParsingResult(
        match.index ?? 0,
        match[0],
        { year: from.getUTCFullYear(), month: from.getUTCMonth() + 1, day: from.getUTCDate(), hour: 0 },
        { year: to.getUTCFullYear(), month: to.getUTCMonth() + 1, day: to.getUTCDate(), hour: to.getUTCHours(), minute: to.getUTCMinutes() },
      );
    },
  });
  return custom;
})();

/**
 * The calendar span one reading of chrono covers, by the finest component it is sure of. A date
 * without its year ("in May", "March 3rd") is the last one before `asOf`.
 */
function spanOf(components: chrono.ParsedComponents, asOf: Date): { from: Date; to: Date } | null {
  const at = components.date();
  if (components.isCertain('month') && !components.isCertain('year') && at > asOf) at.setUTCFullYear(at.getUTCFullYear() - 1);
  if (components.isCertain('day') || components.isCertain('weekday')) {
    const from = startOfUtcDay(at);
    return { from, to: new Date(from.getTime() + DAY_MS) };
  }
  if (components.isCertain('month')) {
    const from = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
    return { from, to: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)) };
  }
  if (!components.isCertain('year')) return null;
  const from = new Date(Date.UTC(at.getUTCFullYear(), 0, 1));
  return { from, to: new Date(Date.UTC(at.getUTCFullYear() + 1, 0, 1)) };
}

/**
 * The past span a query's time expression names ("two weeks ago", "last Saturday", "in May", "the
 * past few weeks", "this year", "recently"), read by chrono-node against `asOf`; null when it
 * names none, or only the present or the future ("tonight", "next week", "now"), which past turns
 * cannot fall in. Spoken dates are loose, so the window is too:
 * - "N units ago" is a point: the window reaches half the distance either side of it;
 * - "last week", "the past few months", "recently": from the point they name up to `asOf`;
 * - a named day, weekday, month or year: that calendar span, a day either side for a day.
 * The window never reaches past `asOf`.
 */
export function readTimeWindow(query: string, asOf: Date): TimeWindow | null {
  const reference = { instant: asOf, timezone: 0 };
  // chrono's time grows faster than its text when the text holds many dates (its refiners compare
  // results pairwise), so a long query is read in overlapping pieces, the first that names a
  // window winning. A result is taken from a piece only if it starts before the overlap: a phrase
  // is far shorter than the overlap, so it ends inside the piece; one starting later may be cut
  // short, and the next piece, starting there, reads it whole.
  for (let start = 0; start < query.length; start += READ_PIECE - READ_OVERLAP) {
    const last = start + READ_PIECE >= query.length;
    for (const result of parser.parse(query.slice(start, start + READ_PIECE), reference, { forwardDate: false })) {
      if (!last && result.index >= READ_PIECE - READ_OVERLAP) break;
      const window = windowOf(result, asOf);
      if (window) return { ...window, text: result.text };
    }
    if (last) break;
  }
  return null;
}

/** Characters chrono reads at once, and how much of them the next piece reads again: far longer than any time phrase. */
const READ_PIECE = 2_000;
const READ_OVERLAP = 500;

/**
 * Pays chrono's setup now rather than in the first searches: its first reading took 18 ms and the
 * second 118 whatever the text (V8 compiles a regular expression to machine code at its second
 * run, and chrono's are large), and a fresh server's first memory searches took 35 and 125 ms.
 */
export function prepareTimeWindowReader(): void {
  for (let run = 0; run < 2; run++) readTimeWindow('the first time, two weeks ago', new Date());
}

/** Null unless the span reaches before the day of `asOf`: only then can it hold past turns worth favouring. */
function windowOf(result: chrono.ParsedResult, asOf: Date): { from: Date; to: Date } | null {
  const start = result.start.date();
  if (Number.isNaN(start.getTime())) return null;
  const today = startOfUtcDay(asOf);
  const cap = (to: Date) => (to > asOf ? asOf : to);
  if (result.end) {
    const [first, last] = [spanOf(result.start, asOf), spanOf(result.end, asOf)];
    if (!first || !last || first.from >= today) return null;
    // "From March to May" asked in April: May is the coming one, not last year's.
    const to = last.to > first.from ? last.to : new Date(Date.UTC(last.to.getUTCFullYear() + 1, last.to.getUTCMonth(), last.to.getUTCDate()));
    return { from: first.from, to: cap(to) };
  }
  if (result.tags().has('result/relativeDate')) {
    const distance = asOf.getTime() - start.getTime();
    if (distance <= 0 || start >= today) return null;
    if (/\bago\b/i.test(result.text)) {
      const half = Math.max(distance / 2, DAY_MS);
      return { from: new Date(start.getTime() - half), to: cap(new Date(start.getTime() + half)) };
    }
    return { from: spanOf(result.start, asOf)?.from ?? start, to: asOf };
  }
  const span = spanOf(result.start, asOf);
  if (!span || span.from >= today) return null;
  const { from, to } = span;
  const dayLong = to.getTime() - from.getTime() <= DAY_MS;
  return dayLong ? { from: new Date(from.getTime() - DAY_MS), to: cap(new Date(to.getTime() + DAY_MS)) } : { from, to: cap(to) };
}
