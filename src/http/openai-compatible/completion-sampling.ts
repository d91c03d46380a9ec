import type { ReasoningEffort } from '../../llm/reasoning.js';
import type { Sampling } from '../../llm/sampling.js';
import type { CompletionRequest } from '../../api/schemas/openai-schemas.js';

/**
 * OpenAI's sampling parameters as a chat turn's: each given one wins over the agent's setting.
 * `max_completion_tokens` (OpenAI's newer name) wins over `max_tokens` when both are sent; either
 * reaches the provider under the name its configuration says.
 */
export function completionSamplingOf(body: CompletionRequest): { sampling?: Sampling; reasoning?: { effort: ReasoningEffort } } {
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  const sampling: Sampling = {
    ...(maxTokens != null ? { maxTokens } : {}),
    ...(body.top_p != null ? { topP: body.top_p } : {}),
    ...(body.stop != null ? { stop: typeof body.stop === 'string' ? [body.stop] : body.stop } : {}),
    ...(body.seed != null ? { seed: body.seed } : {}),
    ...(body.presence_penalty != null ? { presencePenalty: body.presence_penalty } : {}),
    ...(body.frequency_penalty != null ? { frequencyPenalty: body.frequency_penalty } : {}),
    ...(body.temperature != null ? { temperature: body.temperature } : {}),
  };
  return {
    ...(Object.keys(sampling).length > 0 ? { sampling } : {}),
    ...(body.reasoning_effort != null ? { reasoning: { effort: body.reasoning_effort } } : {}),
  };
}
