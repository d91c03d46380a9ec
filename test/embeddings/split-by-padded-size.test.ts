import { describe, expect, it } from 'vitest';
import { splitByPaddedSize } from '../../src/embeddings/split-by-padded-size.js';

describe('splitByPaddedSize', () => {
  const length = (s: string) => s.length;

  it('keeps short items together up to the item count', () => {
    expect(splitByPaddedSize(['a', 'b', 'c', 'd', 'e'], length, 2, 100)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('cuts where the items times the longest would pass the padded size', () => {
    // 3 items of at most 4: 12 ≤ 12; a fourth would pad to 16.
    expect(splitByPaddedSize(['aaaa', 'b', 'cc', 'dd', 'e'], length, 10, 12)).toEqual([
      ['aaaa', 'b', 'cc'],
      ['dd', 'e'],
    ]);
    // A long item after short ones pads them all: it starts the next slice.
    expect(splitByPaddedSize(['a', 'b', 'cccccc'], length, 10, 8)).toEqual([['a', 'b'], ['cccccc']]);
  });

  it('gives an item longer than the padded size a slice of its own, and the items back in order', () => {
    const items = ['xxxxxxxxxx', 'a', 'yyyyyyyyyyyy', 'b', 'c'];
    const slices = splitByPaddedSize(items, length, 4, 8);
    expect(slices).toEqual([['xxxxxxxxxx'], ['a'], ['yyyyyyyyyyyy'], ['b', 'c']]);
    expect(slices.flat()).toEqual(items);
    expect(splitByPaddedSize([], length, 4, 8)).toEqual([]);
  });

  it('refuses an item count that is not a positive integer', () => {
    expect(() => splitByPaddedSize(['a'], length, 0, 8)).toThrow(RangeError);
  });
});
