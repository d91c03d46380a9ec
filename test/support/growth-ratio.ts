import { performance } from 'node:perf_hooks';

/** How a cost grew over an input doubled `doublings` times. */
export interface Growth {
  /** Input sizes, each twice the one before. */
  sizes: number[];
  /** The cost measured at each size (milliseconds, or steps when counted). */
  costs: number[];
  /** The cost's growth per doubling of the input, the median over the doublings: 2 is linear, 4 quadratic. */
  perDoubling: number;
}

/**
 * Linear work doubles with its input; quadratic work quadruples. A bound between the two leaves
 * room for noise (a garbage collection, eight test runs sharing two cores) without letting
 * quadratic growth through.
 */
export const SUPER_LINEAR = 3.2;

/**
 * Rounds of `runs` more, at most, measured while a growth reads super-linear. A machine busy with
 * other test files slows the largest sizes most, since their runs last longest, and a linear walk
 * then passes only if one of its runs at each size fell in a quiet moment: more rounds give it
 * more chances. They can only lower each size's fastest time, never below what the work costs, so
 * quadratic work still reads quadratic.
 */
export const CONFIRMING_ROUNDS = 2;

export interface GrowthOptions {
  /** The smallest size; the others double it. */
  base: number;
  /** How many times the size is doubled (default 3: n, 2n, 4n, 8n). */
  doublings?: number;
  /** Timed runs per size; the fastest counts (default 5). */
  runs?: number;
  /**
   * A size whose cost is the work's fixed part (a request's routing, a database round trip), taken
   * off every size's cost: otherwise it hides how the part that reads the input grows.
   */
  baseline?: number;
  /**
   * With `minBase`: the smallest size is halved, down to `minBase`, while one run of it takes
   * longer than this (ms). A slow walk is then timed on smaller inputs, which still take
   * milliseconds, and a fast one keeps the sizes that lift it above timer noise.
   */
  budgetMs?: number;
  minBase?: number;
}

/**
 * Times `work(n)` over doubling sizes. Runs at every size are interleaved, and the fastest run at
 * each size is kept: interference from other processes only ever adds time, so the minimum is the
 * figure least moved by it. `prepare(n)` builds the input untimed.
 */
export function timedGrowth<T>(prepare: (n: number) => T, work: (input: T) => unknown, options: GrowthOptions): Growth {
  // Once untimed, so that compilation and first-use caches are not charged to the smallest size.
  const base = calibratedBase(options, (n) => {
    const input = prepare(n);
    const start = performance.now();
    work(input);
    return performance.now() - start;
  });
  const sizes = doublingSizes({ ...options, base });
  const inputs = sizes.map(prepare);
  const best = sizes.map(() => Number.POSITIVE_INFINITY);
  const round = () => {
    for (let run = 0; run < (options.runs ?? 5); run++) {
      inputs.forEach((input, i) => {
        const start = performance.now();
        work(input);
        best[i] = Math.min(best[i] as number, performance.now() - start);
      });
    }
    return growth(sizes, best);
  };
  let result = round();
  for (let extra = 0; extra < CONFIRMING_ROUNDS && result.perDoubling >= SUPER_LINEAR; extra++) result = round();
  return result;
}

/** Times an asynchronous `work(input)` the same way as {@link timedGrowth}. */
export async function timedGrowthAsync<T>(
  prepare: (n: number) => Promise<T> | T,
  work: (input: T) => Promise<unknown>,
  options: GrowthOptions,
): Promise<Growth> {
  // Once untimed (warming up, and choosing the base when it may shrink).
  let base = options.base;
  for (;;) {
    const input = await prepare(base);
    const start = performance.now();
    await work(input);
    if (!shrinks(options, base, performance.now() - start)) break;
    base /= 2;
  }
  const sizes = doublingSizes({ ...options, base });
  const measured = options.baseline === undefined ? sizes : [...sizes, options.baseline];
  const inputs: T[] = [];
  for (const size of measured) inputs.push(await prepare(size));
  const best = measured.map(() => Number.POSITIVE_INFINITY);
  const round = async () => {
    for (let run = 0; run < (options.runs ?? 5); run++) {
      for (const [i, input] of inputs.entries()) {
        // Untimed, a turn of the event loop: the test runner's messages wait for one.
        await new Promise((resolve) => setImmediate(resolve));
        const start = performance.now();
        await work(input);
        best[i] = Math.min(best[i] as number, performance.now() - start);
      }
    }
    const fixed = options.baseline === undefined ? 0 : (best.at(-1) as number);
    return growth(
      sizes,
      best.slice(0, sizes.length).map((cost) => Math.max(cost - fixed, 0)),
    );
  };
  let result = await round();
  for (let extra = 0; extra < CONFIRMING_ROUNDS && result.perDoubling >= SUPER_LINEAR; extra++) result = await round();
  return result;
}

/** Growth of a counted cost (steps, calls, characters examined): exact, so no runs to repeat. */
export function countedGrowth(count: (n: number) => number, options: GrowthOptions): Growth {
  const sizes = doublingSizes(options);
  return growth(sizes, sizes.map(count));
}

/** Whether a base whose one run took `ms` is halved (see GrowthOptions.budgetMs). */
const shrinks = ({ budgetMs, minBase }: GrowthOptions, base: number, ms: number) =>
  budgetMs !== undefined && minBase !== undefined && ms > budgetMs && base / 2 >= minBase;

function calibratedBase(options: GrowthOptions, timeOnce: (n: number) => number): number {
  let base = options.base;
  while (shrinks(options, base, timeOnce(base))) base /= 2;
  return base;
}

function doublingSizes({ base, doublings = 3 }: GrowthOptions): number[] {
  return Array.from({ length: doublings + 1 }, (_, i) => base * 2 ** i);
}

/**
 * The lesser of two readings of the growth per doubling: the median of the doublings' ratios, and
 * the mean rate over the whole range (the geometric mean, from the first size to the last). A
 * collection landing in one doubling, or a smallest size timed too short to measure well, moves one
 * reading but seldom both, while super-linear work raises both at every doubling.
 */
function growth(sizes: number[], costs: number[]): Growth {
  const ratios = costs.slice(1).map((cost, i) => cost / Math.max(costs[i] as number, Number.EPSILON));
  ratios.sort((a, b) => a - b);
  const middle = Math.floor(ratios.length / 2);
  const median = ratios.length % 2 === 1 ? (ratios[middle] as number) : Math.sqrt((ratios[middle - 1] as number) * (ratios[middle] as number));
  const first = Math.max(costs[0] as number, Number.EPSILON);
  const overall = ((costs.at(-1) as number) / first) ** (1 / Math.max(ratios.length, 1));
  return { sizes, costs, perDoubling: Math.min(median, overall) };
}

/** A one-line account of a growth for an assertion's message. */
export function describeGrowth({ sizes, costs, perDoubling }: Growth): string {
  const points = sizes.map((size, i) => `${size}: ${(costs[i] as number).toFixed(2)}`).join(', ');
  return `per doubling x${perDoubling.toFixed(2)} (${points})`;
}
