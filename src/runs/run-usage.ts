import type { RunUsage } from './run-types.js';

export const ZERO_RUN_USAGE: RunUsage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/** Two runs' usage together (a parent's with its children's); the optional counts only when either has them. */
export function addRunUsage(a: RunUsage, b: RunUsage): RunUsage {
  const sum: RunUsage = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  if (a.cachedTokens !== undefined || b.cachedTokens !== undefined) sum.cachedTokens = (a.cachedTokens ?? 0) + (b.cachedTokens ?? 0);
  if (a.reasoningTokens !== undefined || b.reasoningTokens !== undefined) sum.reasoningTokens = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  return sum;
}

/** Costs together; unknown (null) when neither is known, the known one when only one is. */
export function addCost(a: number | null | undefined, b: number | null | undefined): number | null {
  if ((a === null || a === undefined) && (b === null || b === undefined)) return null;
  return (a ?? 0) + (b ?? 0);
}
