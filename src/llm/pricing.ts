import type { Usage } from './messages.js';

/** USD per million tokens, per model id as sent to the provider. */
export type PriceTable = Record<string, { inputPerMTok: number; outputPerMTok: number }>;

export function costUsd(prices: PriceTable, model: string, usage: Usage): number | undefined {
  const price = prices[model];
  if (!price) return undefined;
  return (usage.promptTokens * price.inputPerMTok + usage.completionTokens * price.outputPerMTok) / 1_000_000;
}
