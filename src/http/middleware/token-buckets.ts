/**
 * One token bucket per client key: each request takes a token, tokens come back at a steady
 * rate up to `capacity`. Unlike a fixed window, a client cannot spend two windows' worth across
 * a window boundary, and a client that paused gets its burst back gradually rather than at once.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly refillPerMs: number;
  // Sweeping on growth, not on a timer: nothing to stop at shutdown, and the cost is amortised.
  private sweepAt = 1024;

  constructor(
    private readonly capacity: number,
    refillPerMinute: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.refillPerMs = refillPerMinute / 60_000;
  }

  /** Takes a token for `key`: 0 when it had one, else the milliseconds until it will. */
  take(key: string): number {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (bucket) {
      bucket.tokens = this.refilled(bucket, now);
      bucket.at = now;
    } else {
      bucket = { tokens: this.capacity, at: now };
      this.buckets.set(key, bucket);
      if (this.buckets.size >= this.sweepAt) this.sweep(now);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.refillPerMs);
  }

  get size(): number {
    return this.buckets.size;
  }

  private refilled(bucket: { tokens: number; at: number }, now: number): number {
    return Math.min(this.capacity, bucket.tokens + (now - bucket.at) * this.refillPerMs);
  }

  /** A full bucket is the same as none, so dropping it bounds memory by the clients active lately. */
  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (this.refilled(bucket, now) >= this.capacity) this.buckets.delete(key);
    }
    this.sweepAt = Math.max(1024, this.buckets.size * 2);
  }
}
