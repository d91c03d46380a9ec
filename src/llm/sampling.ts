import type { ReasoningEffort } from './reasoning.js';

/** Sampling settings beside temperature, in the agent's own words; `toWireSampling` names them as OpenAI does. */
export interface Sampling {
  maxTokens?: number;
  topP?: number;
  /** At most 4, as OpenAI allows. */
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Over the agent's `temperature`: only an OpenAI client's request sets it here (agents set it beside sampling). */
  temperature?: number;
}

/** What one request asks of the model beyond its messages and tools. */
export interface CallOptions {
  sampling?: Sampling;
  reasoningEffort?: ReasoningEffort;
}

/**
 * The name a provider takes the output limit under: OpenAI's reasoning models refuse `max_tokens`
 * and want `max_completion_tokens`; most compatible servers know only `max_tokens`.
 */
export type MaxTokensParam = 'max_tokens' | 'max_completion_tokens';

/** The request's fields over the agent's, field by field. */
export function mergeSampling(base: Sampling | undefined, over: Sampling | undefined): Sampling | undefined {
  if (!base) return over;
  if (!over) return base;
  return { ...base, ...definedFields(over) };
}

/** The wire fields of a request's options; none of them when none are set, so servers that refuse them are not sent them. */
export function toWireSampling(options: CallOptions | undefined, maxTokensParam: MaxTokensParam): Record<string, unknown> {
  if (!options) return {};
  const { sampling, reasoningEffort } = options;
  const wire: Record<string, unknown> = {};
  if (sampling?.maxTokens !== undefined) wire[maxTokensParam] = sampling.maxTokens;
  if (sampling?.topP !== undefined) wire.top_p = sampling.topP;
  if (sampling?.stop !== undefined && sampling.stop.length > 0) wire.stop = sampling.stop;
  if (sampling?.seed !== undefined) wire.seed = sampling.seed;
  if (sampling?.presencePenalty !== undefined) wire.presence_penalty = sampling.presencePenalty;
  if (sampling?.frequencyPenalty !== undefined) wire.frequency_penalty = sampling.frequencyPenalty;
  if (sampling?.temperature !== undefined) wire.temperature = sampling.temperature;
  if (reasoningEffort !== undefined) wire.reasoning_effort = reasoningEffort;
  return wire;
}

function definedFields<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
