/**
 * Consecutive slices of at most `maxItems` items whose padded size — items times the longest
 * item's length — stays within `maxPadded`; an item longer than `maxPadded` goes alone.
 * Concatenating the slices gives back `items`.
 */
export function splitByPaddedSize<T>(items: readonly T[], lengthOf: (item: T) => number, maxItems: number, maxPadded: number): T[][] {
  if (!Number.isInteger(maxItems) || maxItems < 1) throw new RangeError(`batch size must be a positive integer, got ${maxItems}`);
  const batches: T[][] = [];
  let batch: T[] = [];
  let longest = 0;
  for (const item of items) {
    const length = lengthOf(item);
    const widest = Math.max(longest, length);
    if (batch.length > 0 && (batch.length >= maxItems || (batch.length + 1) * widest > maxPadded)) {
      batches.push(batch);
      batch = [];
      longest = 0;
    }
    batch.push(item);
    longest = Math.max(longest, length);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
