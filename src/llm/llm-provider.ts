import OpenAI from 'openai';
import { AbortedError, ContentFilteredError, TransientError } from './llm-errors.js';
import type { AssistantMessage, ChatMessage, ToolCall, ToolSpec, Usage } from './messages.js';
import { createThinkingSplitter, reasoningField, splitThinking } from './reasoning.js';
import { DEFAULT_RETRY, type RetryInfo, type RetryOptions, withRetry } from './retry.js';
import { type CallOptions, type MaxTokensParam, toWireSampling } from './sampling.js';
import { userWireContent, withToolImages } from './wire-images.js';
import { usageFromWire } from './wire-usage.js';

export interface LlmRequest {
  messages: ChatMessage[];
  tools?: ToolSpec[];
  signal?: AbortSignal;
  /** Sampling and reasoning effort for this request; the provider's defaults for what is unset. */
  options?: CallOptions;
  /** Told before each retry of this request waits. */
  onRetry?: (info: RetryInfo) => void;
}

export interface LlmStreamRequest extends LlmRequest {
  onDelta: (text: string) => void;
  /** Pieces of the model's reasoning as they arrive (never part of `onDelta`'s text). */
  onReasoning?: (text: string) => void;
}

export interface LlmResult {
  message: AssistantMessage;
  usage: Usage;
  finishReason: string | null;
  /** The model the server says answered (it may name a dated version of the one asked for); undefined when it says none. */
  responseModel?: string;
  /** The model's reasoning, kept out of `message`: a reasoning field, or a leading `<think>` block of its text. */
  reasoning?: string;
}

export interface LlmProvider {
  readonly model: string;
  complete(request: LlmRequest): Promise<LlmResult>;
  stream(request: LlmStreamRequest): Promise<LlmResult>;
  /**
   * The same endpoint with another model or temperature (an agent's settings); absent on
   * providers that cannot change them, whose model is then the only one.
   */
  withOptions?(options: { model?: string; temperature?: number }): LlmProvider;
}

export interface LlmProviderOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  /** Sent with every request when set; the provider's default otherwise. */
  temperature?: number;
  /**
   * For `complete`, the whole request; for `stream`, the longest silence between chunks — a long
   * answer that keeps streaming is healthy, a stalled one is not.
   */
  timeoutMs?: number;
  retry?: Partial<RetryOptions>;
  /** The field `sampling.maxTokens` is sent as (default `max_tokens`). */
  maxTokensParam?: MaxTokensParam;
}

export function createLlmProvider(options: LlmProviderOptions): LlmProvider {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const retry: RetryOptions = { ...DEFAULT_RETRY, ...options.retry };
  // maxRetries: 0 because our retry loop classifies errors and honours aborts/budgets; two
  // stacked retry loops would multiply attempts.
  const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, maxRetries: 0, timeout: timeoutMs });
  const model = options.model;
  const sampling = options.temperature === undefined ? {} : { temperature: options.temperature };
  const maxTokensParam = options.maxTokensParam ?? 'max_tokens';
  const retryFor = (request: LlmRequest): RetryOptions => {
    const { onRetry } = request;
    if (!onRetry) return retry;
    return {
      ...retry,
      onRetry: (info) => {
        retry.onRetry?.(info);
        onRetry(info);
      },
    };
  };

  const complete = (request: LlmRequest): Promise<LlmResult> =>
    withRetry(
      () =>
        withIdleTimeout(request.signal, timeoutMs, async (signal) => {
          const response = await client.chat.completions.create(
            {
              model,
              messages: toWireMessages(request.messages),
              ...toolsParam(request.tools),
              ...sampling,
              ...(toWireSampling(request.options, maxTokensParam) as object),
            },
            { signal },
          );
          const choice = response.choices[0];
          const toolCalls: ToolCall[] = (choice?.message.tool_calls ?? []).flatMap((tc) =>
            tc.type === 'function' ? [{ id: tc.id, name: tc.function.name, arguments: tc.function.arguments }] : [],
          );
          const text = choice?.message.content ?? null;
          const thought = text === null ? { content: '', reasoning: '' } : splitThinking(text);
          const reasoning = (reasoningField(choice?.message) ?? '') + thought.reasoning;
          const content = thought.reasoning === '' ? text : thought.content === '' ? null : thought.content;
          return finish({ role: 'assistant', content, toolCalls }, usageFromWire(response.usage), choice?.finish_reason ?? null, response.model, reasoning);
        }),
      retryFor(request),
      request.signal,
    );

  const stream = (request: LlmStreamRequest): Promise<LlmResult> => {
    // Once text has reached the user a retry would repeat it, so only failures before the first
    // delta are retried.
    let emitted = false;
    return withRetry(
      () =>
        withIdleTimeout(request.signal, timeoutMs, async (signal, touch) => {
          const chunks = await client.chat.completions.create(
            {
              model,
              messages: toWireMessages(request.messages),
              ...toolsParam(request.tools),
              ...sampling,
              ...(toWireSampling(request.options, maxTokensParam) as object),
              stream: true,
              stream_options: { include_usage: true },
            },
            { signal },
          );
          let content = '';
          let reasoning = '';
          const thinking = createThinkingSplitter();
          const answer = (text: string) => {
            if (text === '') return;
            content += text;
            emitted = true;
            request.onDelta(text);
          };
          const think = (text: string) => {
            if (text === '') return;
            reasoning += text;
            // Reasoning shown to the user would be shown again by a retry, as text would.
            emitted = true;
            request.onReasoning?.(text);
          };
          let finishReason: string | null = null;
          let usage: Usage = { promptTokens: 0, completionTokens: 0 };
          let responseModel: string | undefined;
          const partials: Array<{ id: string; name: string; arguments: string }> = [];
          for await (const chunk of chunks) {
            touch();
            if (chunk.model) responseModel = chunk.model;
            if (chunk.usage) usage = usageFromWire(chunk.usage);
            const choice = chunk.choices[0];
            if (!choice) continue;
            if (choice.finish_reason) finishReason = choice.finish_reason;
            const field = reasoningField(choice.delta);
            if (field) think(field);
            const text = choice.delta.content;
            if (text) {
              const split = thinking.push(text);
              think(split.reasoning);
              answer(split.content);
            }
            for (const delta of choice.delta.tool_calls ?? []) {
              const partial = (partials[delta.index] ??= { id: '', name: '', arguments: '' });
              if (delta.id) partial.id = delta.id;
              // Some compatible servers split the name too; concatenating is right for both styles
              // because OpenAI sends the name only once.
              if (delta.function?.name) partial.name += delta.function.name;
              if (delta.function?.arguments) partial.arguments += delta.function.arguments;
            }
          }
          // The openai stream ends quietly (no throw) when its signal aborts, so check explicitly.
          if (signal.aborted) throw signal.reason ?? new AbortedError('LLM request aborted');
          const rest = thinking.end();
          think(rest.reasoning);
          answer(rest.content);
          const toolCalls = partials.filter((p): p is ToolCall => p !== undefined && p.name !== '');
          return finish({ role: 'assistant', content: content === '' ? null : content, toolCalls }, usage, finishReason, responseModel, reasoning);
        }),
      retryFor(request),
      request.signal,
      () => !emitted,
    );
  };

  const withOptions = (changes: { model?: string; temperature?: number }): LlmProvider =>
    createLlmProvider({ ...options, model: changes.model ?? model, temperature: changes.temperature ?? options.temperature });

  return { model, complete, stream, withOptions };
}

function finish(message: AssistantMessage, usage: Usage, finishReason: string | null, responseModel: string | undefined, reasoning: string): LlmResult {
  if (finishReason === 'content_filter' && !message.content && message.toolCalls.length === 0) {
    throw new ContentFilteredError('LLM reply was withheld by the content filter');
  }
  return { message, usage, finishReason, ...(responseModel ? { responseModel } : {}), ...(reasoning !== '' ? { reasoning } : {}) };
}

/**
 * Runs one attempt under its own AbortController, aborted by the caller's signal or by our timer,
 * which `touch` restarts (a stream that keeps sending is not timed out).
 * The openai client's own timeout only covers the wait for response headers, not the body/stream.
 */
async function withIdleTimeout<T>(outer: AbortSignal | undefined, timeoutMs: number, run: (signal: AbortSignal, touch: () => void) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(new AbortedError('LLM request aborted', { cause: outer?.reason }));
  if (outer?.aborted) onOuterAbort();
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  const timeoutError = new TransientError(`LLM request timed out after ${timeoutMs} ms`);
  let timer = setTimeout(() => controller.abort(timeoutError), timeoutMs);
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(timeoutError), timeoutMs);
  };
  try {
    return await run(controller.signal, touch);
  } catch (e) {
    // Report why we aborted, not the generic abort error the client surfaces.
    if (controller.signal.aborted && controller.signal.reason instanceof Error) throw controller.signal.reason;
    throw e;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuterAbort);
  }
}

function toolsParam(tools: ToolSpec[] | undefined): { tools?: OpenAI.Chat.ChatCompletionTool[] } {
  // Some compatible servers reject an empty `tools` array, so omit it entirely.
  if (!tools || tools.length === 0) return {};
  return {
    tools: tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.parameters },
    })),
  };
}

export function toWireMessages(messages: ChatMessage[]): OpenAI.Chat.ChatCompletionMessageParam[] {
  const wire = messages.map((m): OpenAI.Chat.ChatCompletionMessageParam => {
    switch (m.role) {
      case 'system':
        return { role: m.role, content: m.content };
      case 'user':
        return { role: m.role, content: userWireContent(m.content, m.images) };
      case 'tool':
        return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
      case 'assistant':
        return {
          role: 'assistant',
          content: m.content,
          ...(m.toolCalls.length > 0
            ? {
                tool_calls: m.toolCalls.map((c) => ({
                  id: c.id,
                  type: 'function' as const,
                  function: { name: c.name, arguments: c.arguments },
                })),
              }
            : {}),
        };
    }
  });
  return withToolImages(messages, wire);
}
