/**
 * `fc.assert` that also fails when the property checked nothing.
 *
 * A property holds vacuously when no case reaches the end of its predicate: `numRuns` of 0 (or NaN
 * from a mistyped FUZZ_RUNS), every case refused by `fc.pre`, a time limit spent before the first
 * case is done. fast-check passes some of these. Here every case that ran its predicate to the end
 * is counted, and a run with none is a failure that says why it may have happened.
 *
 * Several arbitraries: combine them with `fc.tuple` or `fc.record`.
 */
import fc from 'fast-check';

export interface CheckedRun {
  /** Cases whose predicate ran to the end before fast-check stopped. */
  executed: number;
  /** Cases whose predicate `fc.pre` refused. */
  refused: number;
}

export async function assertProperty<T>(
  arbitrary: fc.Arbitrary<T>,
  // biome-ignore lint/suspicious/noConfusingVoidType: fast-check's own predicate type: a predicate may return nothing.
  predicate: (value: T) => boolean | void | Promise<boolean | void>,
  parameters: fc.Parameters<[T]> = {},
): Promise<CheckedRun> {
  const counts = { executed: 0, refused: 0 };
  let stopped = false;
  const property = fc.asyncProperty(arbitrary, async (value) => {
    try {
      const verdict = await predicate(value);
      // A case fast-check abandoned at its time limit may finish later: it was not part of the run.
      if (!stopped) counts.executed += 1;
      return verdict;
    } catch (error) {
      if (fc.PreconditionFailure.isFailure(error) && !stopped) counts.refused += 1;
      throw error;
    }
  });
  try {
    await fc.assert(property, parameters);
  } finally {
    stopped = true;
  }
  if (counts.executed === 0) {
    throw new Error(
      `the property ran no case to the end (numRuns ${String(parameters.numRuns ?? 'default')}, ` +
        `${counts.refused} refused by fc.pre${parameters.interruptAfterTimeLimit === undefined ? '' : `, time limit ${parameters.interruptAfterTimeLimit} ms`}): ` +
        'it would have passed without checking anything',
    );
  }
  return { ...counts };
}
