import { describe, expect, it } from 'vitest';
import { TokenBuckets } from '../../../src/http/middleware/token-buckets.js';

describe('TokenBuckets', () => {
  it('allows a burst, then one request per refill interval, and says how long to wait', () => {
    let now = 0;
    // 60 a minute: one token a second, bucket of 3.
    const buckets = new TokenBuckets(3, 60, () => now);
    expect([buckets.take('a'), buckets.take('a'), buckets.take('a')]).toEqual([0, 0, 0]);
    expect(buckets.take('a')).toBe(1000);
    now = 400;
    expect(buckets.take('a')).toBe(600);
    now = 1000;
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('a')).toBe(1000);
    // Others have their own buckets.
    expect(buckets.take('b')).toBe(0);
  });

  it('refills up to the capacity only, however long the pause', () => {
    let now = 0;
    const buckets = new TokenBuckets(2, 60, () => now);
    buckets.take('a');
    buckets.take('a');
    now = 3_600_000;
    expect([buckets.take('a'), buckets.take('a')]).toEqual([0, 0]);
    expect(buckets.take('a')).toBeGreaterThan(0);
  });

  it('forgets clients whose bucket has refilled, so memory follows the active clients', () => {
    let now = 0;
    const buckets = new TokenBuckets(1, 60, () => now);
    for (let i = 0; i < 1000; i++) buckets.take(`client-${i}`);
    expect(buckets.size).toBe(1000);
    now = 2000; // all refilled
    for (let i = 0; i < 100; i++) buckets.take(`later-${i}`);
    expect(buckets.size).toBeLessThan(200);
    // A forgotten client starts again with a full bucket, as it would have had anyway.
    expect(buckets.take('client-0')).toBe(0);
  });
});
