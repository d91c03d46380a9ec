import { describe, expect, it } from 'vitest';
import { RECENT_DAYS, readTimeWindow } from '../../src/text/time-window.js';

// A Friday: 20 January 2023, 02:21 UTC.
const asOf = new Date('2023-01-20T02:21:00Z');
const window = (query: string) => {
  const w = readTimeWindow(query, asOf);
  return w && { from: w.from.toISOString(), to: w.to.toISOString(), text: w.text };
};

describe('readTimeWindow', () => {
  it('reads "N units ago" as a point with half the distance either side', () => {
    expect(window('What did I buy two weeks ago?')).toEqual({ from: '2022-12-30T02:21:00.000Z', to: '2023-01-13T02:21:00.000Z', text: 'two weeks ago' });
    // At least a day either side, however near.
    expect(window('what did I say a day ago')).toEqual({ from: '2023-01-18T02:21:00.000Z', to: '2023-01-20T02:21:00.000Z', text: 'a day ago' });
  });

  it('reads a named weekday, day or month as that span, a day either side of a day', () => {
    expect(window('Where did I go last Saturday?')).toEqual({ from: '2023-01-13T00:00:00.000Z', to: '2023-01-16T00:00:00.000Z', text: 'last Saturday' });
    expect(window('what did I say on March 3rd')?.from).toBe('2022-03-02T00:00:00.000Z');
    expect(window('yesterday')).toEqual({ from: '2023-01-18T00:00:00.000Z', to: '2023-01-20T02:21:00.000Z', text: 'yesterday' });
  });

  it('takes a month without a year as the last one before asOf', () => {
    expect(window('What did I do in May?')).toEqual({ from: '2022-05-01T00:00:00.000Z', to: '2022-06-01T00:00:00.000Z', text: 'May' });
    expect(window('What did I do in December?')?.from).toBe('2022-12-01T00:00:00.000Z');
  });

  it('reads "the past few weeks", "last month" and "this year" up to asOf', () => {
    expect(window('the past few weeks')).toEqual({ from: '2022-12-30T00:00:00.000Z', to: '2023-01-20T02:21:00.000Z', text: 'past few weeks' });
    expect(window('what did I do last month')?.from).toBe('2022-12-01T00:00:00.000Z');
    expect(window('how many trips this year')).toEqual({ from: '2023-01-01T00:00:00.000Z', to: '2023-01-20T02:21:00.000Z', text: 'this year' });
  });

  it(`reads "recently" and "lately" as the last ${RECENT_DAYS} days`, () => {
    expect(window('What have I been reading recently?')).toEqual({ from: '2022-12-21T00:00:00.000Z', to: '2023-01-20T02:21:00.000Z', text: 'recently' });
    expect(window('lately')?.text).toBe('lately');
  });

  it('reads a range from its first span to its last', () => {
    expect(window('from March to May')).toEqual({ from: '2022-03-01T00:00:00.000Z', to: '2022-06-01T00:00:00.000Z', text: 'March to May' });
    // Asked in April, the range runs from this March up to asOf.
    const april = readTimeWindow('from March to May', new Date('2023-04-15T00:00:00Z'))!;
    expect([april.from.toISOString(), april.to.toISOString()]).toEqual(['2023-03-01T00:00:00.000Z', '2023-04-15T00:00:00.000Z']);
  });

  it('names no window for the present, the future or no time at all', () => {
    for (const query of [
      'tonight',
      'now',
      'today',
      'this morning',
      'next week',
      'this weekend',
      'in two weeks',
      'the first time I went',
      'what is my dog called?',
    ]) {
      expect(window(query), query).toBeNull();
    }
  });

  it('reads no day from "first" in a comparison, and the month, not the 1st, from "the first … in June"', () => {
    for (const query of [
      'Which device did I set up first, the smart thermostat or the new router?',
      'Who became a parent first, Rachel or Alex?',
      'Which seeds were started first, the tomatoes or the marigolds?',
    ]) {
      expect(window(query), query).toBeNull();
    }
    expect(window('How many days before the first BBQ event in June did I buy the grill?')).toEqual({
      from: '2022-06-01T00:00:00.000Z',
      to: '2022-07-01T00:00:00.000Z',
      text: 'June',
    });
  });

  it('reads "N days ago" and "N weeks ago" against asOf, whatever the clock says', () => {
    const later = new Date('2024-07-01T00:00:00Z');
    expect(readTimeWindow('the social media activity I did 5 days ago', later)!.from.toISOString()).toBe('2024-06-23T12:00:00.000Z');
    expect(window('the business milestone I mentioned four weeks ago')).toEqual({
      from: '2022-12-09T02:21:00.000Z',
      to: '2023-01-06T02:21:00.000Z',
      text: 'four weeks ago',
    });
  });

  it('never reaches past asOf', () => {
    for (const query of ['last week', 'this year', 'recently', 'three days ago', 'yesterday']) {
      expect(readTimeWindow(query, asOf)!.to.getTime(), query).toBeLessThanOrEqual(asOf.getTime());
    }
  });
});
