import type { Usage } from './messages.js';

/**
 * USD per million tokens, per model id as sent to the provider. `cachedInputPerMTok` prices the
 * prompt tokens served from the provider's prefix cache (`Usage.cachedTokens`); without it they
 * cost the full input price.
 */
export type PriceTable = Record<string, { inputPerMTok: number; outputPerMTok: number; cachedInputPerMTok?: number }>;

export function costUsd(prices: PriceTable, model: string, usage: Usage): number | undefined {
  const price = prices[model];
  if (!price) return undefined;
  const cached = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
  const cachedPrice = price.cachedInputPerMTok ?? price.inputPerMTok;
  const input = (usage.promptTokens - cached) * price.inputPerMTok + cached * cachedPrice;
  return (input + usage.completionTokens * price.outputPerMTok) / 1_000_000;
}
