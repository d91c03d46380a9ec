// The console's wording is English; a day, a month's name and a year read the same everywhere: 3 March 2026.
const LONG_DATE = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric' });

/** An ISO 8601 instant as a date in words, in the browser's time zone: `3 March 2026`. */
export function longDate(iso: string): string {
  return LONG_DATE.format(new Date(iso));
}
