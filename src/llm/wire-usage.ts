import type { Usage } from './messages.js';

/** Usage as the providers send it: OpenAI's fields, and the cache fields others name their own way. */
interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
  /** DeepSeek. */
  prompt_cache_hit_tokens?: number;
  /** Anthropic's OpenAI-compatible endpoint and some proxies. */
  cache_read_input_tokens?: number;
}

/** A reply's usage; `cachedTokens` and `reasoningTokens` only when the provider reported some. */
export function usageFromWire(raw: unknown): Usage {
  const wire = (raw ?? {}) as WireUsage;
  const cached = wire.prompt_tokens_details?.cached_tokens ?? wire.prompt_cache_hit_tokens ?? wire.cache_read_input_tokens ?? 0;
  const reasoning = wire.completion_tokens_details?.reasoning_tokens ?? 0;
  return {
    promptTokens: wire.prompt_tokens ?? 0,
    completionTokens: wire.completion_tokens ?? 0,
    ...(cached > 0 ? { cachedTokens: cached } : {}),
    ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

/** Adds a call's usage to a running total; the optional counts appear once some are reported. */
export function addUsage(total: Usage & { totalTokens: number }, usage: Usage): void {
  total.promptTokens += usage.promptTokens;
  total.completionTokens += usage.completionTokens;
  total.totalTokens = total.promptTokens + total.completionTokens;
  if (usage.cachedTokens) total.cachedTokens = (total.cachedTokens ?? 0) + usage.cachedTokens;
  if (usage.reasoningTokens) total.reasoningTokens = (total.reasoningTokens ?? 0) + usage.reasoningTokens;
}
