import type { LlmProvider } from '../llm/llm-provider.js';
import type { ChatMessage } from '../llm/messages.js';

export interface SummarizeRequest {
  /** The system message: what to write. */
  instructions: string;
  /** The user message: the material. */
  input: string;
  signal?: AbortSignal;
}

/** Writes summaries with a model. Every caller has a rule-based fallback for when it throws. */
export interface Summarizer {
  summarize(request: SummarizeRequest): Promise<string>;
}

export class SummarizerTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`summarizer did not answer within ${timeoutMs} ms`);
    this.name = 'SummarizerTimeoutError';
  }
}

export interface LlmSummarizerOptions {
  /**
   * The whole call, retries included. Short on purpose: a summary is an optimisation, and the
   * rule-based fallback is better than a turn (or a background queue) stuck behind a slow model.
   */
  timeoutMs: number;
}

/** A summarizer over the chat's own model, without tools, answering in plain text. */
export function createLlmSummarizer(provider: LlmProvider, options: LlmSummarizerOptions): Summarizer {
  return {
    async summarize({ instructions, input, signal }) {
      const controller = new AbortController();
      const timeout = new SummarizerTimeoutError(options.timeoutMs);
      const timer = setTimeout(() => controller.abort(timeout), options.timeoutMs);
      const onAbort = () => controller.abort(signal?.reason);
      if (signal?.aborted) onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        const messages: ChatMessage[] = [
          { role: 'system', content: instructions },
          { role: 'user', content: input },
        ];
        const result = await provider.complete({ messages, signal: controller.signal });
        const text = storableText(result.message.content ?? '').trim();
        if (text === '') throw new Error('summarizer returned an empty reply');
        return text;
      } catch (error) {
        if (controller.signal.reason === timeout) throw timeout;
        throw error;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
    },
  };
}

// Summaries are stored in Postgres text columns, which hold neither NUL nor unpaired surrogates.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function storableText(text: string): string {
  return text.replace(UNSTORABLE, (c) => (c === '\u0000' ? '' : '\uFFFD'));
}
