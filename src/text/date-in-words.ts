const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'] as const;

/**
 * A day as words, in UTC: "Tuesday 12 May 2026". Written out rather than ISO so that BM25 and the
 * embedder see "May" and "Tuesday" (a question such as "what did I say in May?" names the month,
 * never "2026-05"); not through Intl, whose output varies with the ICU data of the runtime.
 */
export function dateInWords(at: Date): string {
  return `${WEEKDAYS[at.getUTCDay()]} ${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()}`;
}
