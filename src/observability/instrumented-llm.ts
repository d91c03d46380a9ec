import { type Span, SpanKind } from '@opentelemetry/api';
import { AbortedError } from '../llm/llm-errors.js';
import type { LlmProvider, LlmRequest, LlmResult, LlmStreamRequest } from '../llm/llm-provider.js';
import { type PriceTable, costUsd } from '../llm/pricing.js';
import { llmCachedTokens, llmReasoningTokens, llmRequestDuration, llmTimeToFirstToken, llmTokens } from './metrics.js';
import {
  GEN_AI_OPERATION,
  GEN_AI_OPERATION_NAME,
  GEN_AI_PROVIDER_NAME,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_RESPONSE_FINISH_REASONS,
  GEN_AI_RESPONSE_MODEL,
  GEN_AI_SYSTEM,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  MEMRAG_COST_USD,
  withSpan,
} from './tracing.js';

export interface LlmInstrumentationOptions {
  /** Prices by model, for the cost a call's span reports (none when its model has no price). */
  prices?: PriceTable;
}

/**
 * memrag speaks the OpenAI chat completions protocol to every endpoint (OpenAI's or a compatible
 * server's), so that is the provider its spans name.
 */
const PROVIDER_NAME = 'openai';

/**
 * The provider with its calls measured: latency by outcome, time to first token when streaming,
 * and the tokens the provider reports (the cached and reasoning ones apart); and traced, a span per call with the GenAI semantic
 * conventions (model asked for and answering, tokens, finish reason) and its cost. A wrapper
 * rather than agent hooks because hooks see results only, not how long a call took or how it
 * failed; every user of the context's model (chat, and background work such as summaries) is
 * measured alike.
 */
export function instrumentLlmProvider(provider: LlmProvider, options: LlmInstrumentationOptions = {}): LlmProvider {
  const { model } = provider;

  async function measured(mode: 'complete' | 'stream', call: () => Promise<LlmResult>): Promise<LlmResult> {
    const attributes = {
      [GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION.chat,
      [GEN_AI_PROVIDER_NAME]: PROVIDER_NAME,
      [GEN_AI_SYSTEM]: PROVIDER_NAME,
      [GEN_AI_REQUEST_MODEL]: model,
      'memrag.llm.streamed': mode === 'stream',
    };
    return withSpan(
      `${GEN_AI_OPERATION.chat} ${model}`,
      attributes,
      async (span) => {
        const stop = llmRequestDuration.startTimer({ model, mode });
        try {
          const result = await call();
          stop({ outcome: 'ok' });
          llmTokens.inc({ model, type: 'prompt' }, result.usage.promptTokens);
          llmTokens.inc({ model, type: 'completion' }, result.usage.completionTokens);
          if (result.usage.cachedTokens) llmCachedTokens.inc({ model }, result.usage.cachedTokens);
          if (result.usage.reasoningTokens) llmReasoningTokens.inc({ model }, result.usage.reasoningTokens);
          describeResult(span, result);
          return result;
        } catch (err) {
          // A client hanging up is not a provider problem; keep it out of the error rate.
          stop({ outcome: err instanceof AbortedError ? 'aborted' : 'error' });
          throw err;
        }
      },
      { kind: SpanKind.CLIENT },
    );
  }

  function describeResult(span: Span, result: LlmResult): void {
    if (!span.isRecording()) return;
    span.setAttributes({
      [GEN_AI_RESPONSE_MODEL]: result.responseModel ?? model,
      [GEN_AI_USAGE_INPUT_TOKENS]: result.usage.promptTokens,
      [GEN_AI_USAGE_OUTPUT_TOKENS]: result.usage.completionTokens,
      ...(result.finishReason ? { [GEN_AI_RESPONSE_FINISH_REASONS]: [result.finishReason] } : {}),
    });
    const cost = options.prices ? costUsd(options.prices, model, result.usage) : undefined;
    if (cost !== undefined) span.setAttribute(MEMRAG_COST_USD, cost);
  }

  return {
    model,
    ...(provider.withOptions ? { withOptions: (changes) => instrumentLlmProvider(provider.withOptions!(changes), options) } : {}),
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
