import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { CONFIRMING_ROUNDS, SUPER_LINEAR, timedGrowth, timedGrowthAsync } from './growth-ratio.js';

/** Holds the thread for `ms`: a cost that other processes can lengthen but never shorten. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const RUNS = 3;
/**
 * How much longer each size ran in CI's failed reading of a linear walk (the chunker over
 * instruction words: 12.9, 62.3, 124.5 and 461.3 ms, where a quiet machine gives about 10, 33, 86
 * and 176): the larger sizes slowed most, as a machine busy with other files does.
 */
const BUSY = [1, 2.4, 2.4, 4.5];

/** Linear work (1, 2, 4, 8 ms), slowed as BUSY says for its first round of RUNS runs at each size. */
function linearOnABusyMachine(): (n: number) => void {
  const calls = new Map<number, number>();
  return (n) => {
    const call = (calls.get(n) ?? 0) + 1;
    calls.set(n, call);
    const size = Math.log2(n / 1000);
    spin((n / 1000) * (call <= RUNS ? (BUSY[size] ?? 1) : 1));
  };
}

/**
 * Quadratic work (2, 8, 32, 128 ms). Its smallest size lasts long enough that a busy machine
 * cannot lengthen every one of its runs, which would flatten the growth read over the whole range.
 */
const quadratic = (n: number) => spin(2 * (n / 1000) ** 2);

describe('timedGrowth', () => {
  it('reads a linear walk slowed by a busy machine in its first round as linear', () => {
    const growth = timedGrowth((n) => n, linearOnABusyMachine(), { base: 1000, runs: RUNS });
    expect(growth.perDoubling).toBeLessThan(SUPER_LINEAR);
  });

  it('still reads quadratic work as quadratic after every round', () => {
    const growth = timedGrowth((n) => n, quadratic, { base: 1000, runs: RUNS });
    expect(growth.perDoubling).toBeGreaterThanOrEqual(SUPER_LINEAR);
  });

  it('confirms with at most CONFIRMING_ROUNDS rounds more', () => {
    let calls = 0;
    timedGrowth(
      (n) => n,
      (n) => {
        calls += 1;
        quadratic(n);
      },
      { base: 1000, runs: RUNS },
    );
    // One untimed call at the smallest size, then each round runs every size RUNS times.
    expect(calls).toBe(1 + (1 + CONFIRMING_ROUNDS) * RUNS * 4);
  });
});

describe('timedGrowthAsync', () => {
  it('reads a linear walk slowed by a busy machine in its first round as linear', async () => {
    const work = linearOnABusyMachine();
    const growth = await timedGrowthAsync(
      (n) => n,
      async (n) => work(n),
      { base: 1000, runs: RUNS },
    );
    expect(growth.perDoubling).toBeLessThan(SUPER_LINEAR);
  });

  it('still reads quadratic work as quadratic, its fixed part taken off', async () => {
    const growth = await timedGrowthAsync(
      (n) => n,
      async (n) => spin(0.5 + 2 * (n / 1000) ** 2),
      { base: 1000, runs: RUNS, baseline: 1 },
    );
    expect(growth.perDoubling).toBeGreaterThanOrEqual(SUPER_LINEAR);
  });
});
