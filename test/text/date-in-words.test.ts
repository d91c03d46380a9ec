import { describe, expect, it } from 'vitest';
import { dateInWords } from '../../src/text/date-in-words.js';

describe('dateInWords', () => {
  it('writes the UTC day out in words', () => {
    expect(dateInWords(new Date('2026-05-12T09:00:00Z'))).toBe('Tuesday 12 May 2026');
    expect(dateInWords(new Date('2025-01-01T23:59:59Z'))).toBe('Wednesday 1 January 2025');
    // Late on the 31st in New York is the 1st in UTC.
    expect(dateInWords(new Date('2024-12-31T23:30:00-05:00'))).toBe('Wednesday 1 January 2025');
  });
});
