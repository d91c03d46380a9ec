import { AbortedError } from '../llm/llm-errors.js';
import type { LlmProvider, LlmRequest, LlmResult, LlmStreamRequest } from '../llm/llm-provider.js';
import { llmRequestDuration, llmTimeToFirstToken, llmTokens } from './metrics.js';

/**
 * The provider with its calls measured: latency by outcome, time to first token when streaming,
 * and the tokens the provider reports. A wrapper rather than agent hooks because hooks see
 * results only, not how long a call took or how it failed; every user of the context's model
 * (chat, and background work such as summaries) is measured alike.
 */
export function instrumentLlmProvider(provider: LlmProvider): LlmProvider {
  const { model } = provider;

  async function measured(mode: 'complete' | 'stream', call: () => Promise<LlmResult>): Promise<LlmResult> {
    const stop = llmRequestDuration.startTimer({ model, mode });
    try {
      const result = await call();
      stop({ outcome: 'ok' });
      llmTokens.inc({ model, type: 'prompt' }, result.usage.promptTokens);
      llmTokens.inc({ model, type: 'completion' }, result.usage.completionTokens);
      return result;
    } catch (err) {
      // A client hanging up is not a provider problem; keep it out of the error rate.
      stop({ outcome: err instanceof AbortedError ? 'aborted' : 'error' });
      throw err;
    }
  }

  return {
    model,
    ...(provider.withOptions ? { withOptions: (options) => instrumentLlmProvider(provider.withOptions!(options)) } : {}),
    complete: (request: LlmRequest) => measured('complete', () => provider.complete(request)),
    stream: (request: LlmStreamRequest) => {
      const started = performance.now();
      let first = true;
      const onDelta = (text: string) => {
        if (first) {
          first = false;
          llmTimeToFirstToken.observe({ model }, (performance.now() - started) / 1000);
        }
        request.onDelta(text);
      };
      return measured('stream', () => provider.stream({ ...request, onDelta }));
    },
  };
}
