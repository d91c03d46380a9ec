import type { ValidTime } from '../memory-types.js';

// A calendar date, or only its year and month: "until 2022" and "since June 2019" are how people say it.
const DATE = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * An ISO 8601 date or date-time the model gave, or undefined when it is anything else (prose, an
 * impossible day: JavaScript's Date would roll 2022-02-30 over into March). A date without a day
 * or month is read as the start of that period for `start`, its last day for `end`; a date-time
 * without an offset as UTC.
 */
export function parseExtractedDate(value: unknown, side: 'start' | 'end'): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  const date = DATE.exec(text);
  if (date) {
    const year = Number(date[1]);
    const month = date[2] === undefined ? (side === 'start' ? 1 : 12) : Number(date[2]);
    if (year < 1 || month < 1 || month > 12) return undefined;
    const day = date[3] === undefined ? (side === 'start' ? 1 : daysIn(year, month)) : Number(date[3]);
    if (day < 1 || day > daysIn(year, month)) return undefined;
    return utc(year, month, day, 0, 0, 0);
  }
  const time = DATE_TIME.exec(text);
  if (!time) return undefined;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(time[i] ?? 0)) as [number, number, number, number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return undefined;
  const parsed = new Date(`${time[1]}-${time[2]}-${time[3]}T${time[4]}:${time[5]}:${time[6] ?? '00'}${time[7] ?? ''}${normalizedOffset(time[8])}`);
  return Number.isNaN(parsed.getTime()) ? undefined : parsed;
}

/**
 * The valid time of an extracted fact: each bound that parses, and neither when the end is not
 * after the start (one of them is wrong, and which cannot be told).
 */
export function extractedValidTime(validFrom: unknown, validUntil: unknown): ValidTime {
  const from = parseExtractedDate(validFrom, 'start');
  const until = parseExtractedDate(validUntil, 'end');
  if (from && until && until.getTime() <= from.getTime()) return {};
  return { ...(from ? { validFrom: from } : {}), ...(until ? { validUntil: until } : {}) };
}

function utc(year: number, month: number, day: number, hour: number, minute: number, second: number): Date {
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  // Date.UTC maps years 0-99 to 1900-1999.
  date.setUTCFullYear(year);
  return date;
}

function normalizedOffset(offset: string | undefined): string {
  if (offset === undefined || offset.toUpperCase() === 'Z') return 'Z';
  return offset.includes(':') ? offset : `${offset.slice(0, 3)}:${offset.slice(3)}`;
}
