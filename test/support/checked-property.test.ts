import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertProperty } from './checked-property.js';

describe('assertProperty', () => {
  it('fails a property whose cases are all filtered out, without running its check once', async () => {
    let checked = 0;
    const run = assertProperty(
      fc.integer(),
      (n) => {
        // biome-ignore lint/suspicious/noSelfCompare: a precondition no value meets, on purpose.
        fc.pre(n !== n);
        checked += 1;
      },
      { numRuns: 20 },
    );
    await expect(run).rejects.toThrow();
    expect(checked).toBe(0);
  });

  it('fails a property that ran zero cases, which fast-check itself lets pass (numRuns 0, or NaN from a mistyped setting)', async () => {
    for (const numRuns of [0, Number('two hundred')]) {
      // What made the helper necessary: fc.assert resolves although nothing was checked.
      await expect(
        fc.assert(
          fc.asyncProperty(fc.integer(), async () => false),
          { numRuns },
        ),
      ).resolves.toBeUndefined();
      await expect(assertProperty(fc.integer(), () => false, { numRuns })).rejects.toThrow(/ran no case to the end.*without checking anything/);
    }
  });

  it('fails a property whose every case is still running when its time limit ends', async () => {
    const run = assertProperty(fc.integer(), () => new Promise<void>((resolve) => setTimeout(resolve, 500)), {
      interruptAfterTimeLimit: 50,
      markInterruptAsFailure: false,
    });
    await expect(run).rejects.toThrow();
  });

  it('counts the cases that ran to the end and those fc.pre refused', async () => {
    const seen: number[] = [];
    const { executed, refused } = await assertProperty(
      fc.integer({ min: 0, max: 9 }),
      (n) => {
        fc.pre(n % 2 === 0);
        seen.push(n);
      },
      { numRuns: 30, seed: 42 },
    );
    expect(executed).toBe(30);
    expect(seen).toHaveLength(30);
    expect(seen.every((n) => n % 2 === 0)).toBe(true);
    expect(refused).toBeGreaterThan(0);
  });

  it('passes on an interrupted run once a case ran to the end', async () => {
    const { executed } = await assertProperty(fc.integer(), () => new Promise<void>((resolve) => setTimeout(resolve, 20)), {
      numRuns: 1_000,
      interruptAfterTimeLimit: 200,
      markInterruptAsFailure: false,
    });
    expect(executed).toBeGreaterThan(0);
    expect(executed).toBeLessThan(1_000);
  });

  it('reports a failing case as fc.assert does, with its counterexample and seed', async () => {
    const run = assertProperty(fc.integer({ min: 0, max: 100 }), (n) => n < 50, { seed: 7 });
    await expect(run).rejects.toThrow(/Property failed after \d+ tests[\s\S]*seed: 7[\s\S]*Counterexample: \[50\]/);
  });
});
