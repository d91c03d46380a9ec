import { describe, expect, it } from 'vitest';
import { splitSentenceSpans } from '../../src/text/sentence-split.js';
import { SUPER_LINEAR, describeGrowth, timedGrowth } from '../support/growth-ratio.js';

/**
 * Inputs that make one sentence of many pieces (lines wrapped inside a sentence, abbreviations,
 * initials), or many pieces that each end in a long run the splitter reads back over.
 */
const ADVERSARIAL: [string, (n: number) => string][] = [
  ['lines wrapped inside one sentence ("zebra\\n" × n)', (n) => 'zebra\n'.repeat(n)],
  ['titles before names ("Mr. " × n)', (n) => 'Mr. '.repeat(n)],
  ['abbreviations before lower case ("a. " × n)', (n) => 'Jan. a. '.repeat(n)],
  ['dotted abbreviations ("e.g. " × n)', (n) => 'e.g. '.repeat(n)],
  ['initials ("J. " × n)', (n) => 'J. '.repeat(n)],
  ['one run of letter-dot pairs', (n) => `${'a.'.repeat(n * 3)} Next.`],
  ['blank lines', (n) => 'zebra\n\n'.repeat(n)],
  ['whitespace runs between wrapped lines', (n) => 'zebra \t \n  '.repeat(n)],
  ['closing brackets after stops', (n) => 'Yes.)]"\' '.repeat(n)],
  ['one line without a space', (n) => 'x'.repeat(n * 6)],
];

describe('one chat stalls every tenant: sentence splitting of a 60 KB memory is quadratic', () => {
  it.each(ADVERSARIAL)('splits %s in time linear in its length', (_name, make) => {
    const growth = timedGrowth(make, splitSentenceSpans, { base: 4000 });
    expect(growth.perDoubling, describeGrowth(growth)).toBeLessThan(SUPER_LINEAR);
  });

  it('still makes one sentence of a 60 KB memory of wrapped lines', () => {
    const text = 'zebra\n'.repeat(10_000);
    expect(splitSentenceSpans(text)).toEqual([{ text: text.trim(), start: 0, end: text.length - 1 }]);
  });
});
