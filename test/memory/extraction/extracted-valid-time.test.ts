import { describe, expect, it } from 'vitest';
import { extractedValidTime, parseExtractedDate } from '../../../src/memory/extraction/extracted-valid-time.js';

const iso = (d: Date | undefined) => d?.toISOString();

describe('parseExtractedDate', () => {
  it('reads ISO 8601 dates at midnight UTC, and a year or a month as the start or the end of it', () => {
    expect(iso(parseExtractedDate('2022-06-30', 'end'))).toBe('2022-06-30T00:00:00.000Z');
    expect(iso(parseExtractedDate(' 2019-01-01 ', 'start'))).toBe('2019-01-01T00:00:00.000Z');
    expect(iso(parseExtractedDate('2019', 'start'))).toBe('2019-01-01T00:00:00.000Z');
    expect(iso(parseExtractedDate('2019', 'end'))).toBe('2019-12-31T00:00:00.000Z');
    expect(iso(parseExtractedDate('2024-02', 'end'))).toBe('2024-02-29T00:00:00.000Z');
    expect(iso(parseExtractedDate('2023-02', 'start'))).toBe('2023-02-01T00:00:00.000Z');
  });

  it('reads date-times, with an offset or as UTC without one', () => {
    expect(iso(parseExtractedDate('2022-06-30T14:05:00Z', 'end'))).toBe('2022-06-30T14:05:00.000Z');
    expect(iso(parseExtractedDate('2022-06-30T14:05:00+02:00', 'end'))).toBe('2022-06-30T12:05:00.000Z');
    expect(iso(parseExtractedDate('2022-06-30T14:05:00.250-0130', 'end'))).toBe('2022-06-30T15:35:00.250Z');
    expect(iso(parseExtractedDate('2022-06-30 14:05', 'start'))).toBe('2022-06-30T14:05:00.000Z');
  });

  it('drops what is not a date: prose, impossible days and months, other types', () => {
    for (const value of ['June 2022', '2022-02-30', '2023-02-29', '2022-13-01', '2022-00', '0000', '2022-06-30T25:00:00Z', '22-06-30', '', null, 2022, {}]) {
      expect(parseExtractedDate(value, 'start'), String(value)).toBeUndefined();
    }
  });
});

describe('extractedValidTime', () => {
  it('keeps each bound that parses', () => {
    expect(extractedValidTime('2019-01-01', undefined)).toEqual({ validFrom: new Date('2019-01-01T00:00:00Z') });
    expect(extractedValidTime('soon', '2022-06-30')).toEqual({ validUntil: new Date('2022-06-30T00:00:00Z') });
    expect(extractedValidTime('2019-01-01', '2022-06')).toEqual({ validFrom: new Date('2019-01-01T00:00:00Z'), validUntil: new Date('2022-06-30T00:00:00Z') });
  });

  it('drops both when the end is not after the start', () => {
    expect(extractedValidTime('2022-06-30', '2019-01-01')).toEqual({});
    expect(extractedValidTime('2022-06-30', '2022-06-30')).toEqual({});
  });
});
