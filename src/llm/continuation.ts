import type { ChatMessage } from './messages.js';

/** What the model is asked after a reply the output limit cut: go on, not start over. */
export const CONTINUE_PROMPT =
  'Your reply was cut off by the output limit. Continue exactly where it stopped: do not repeat or summarise what you already wrote.';

export const DEFAULT_MAX_CONTINUATIONS = 2;

/** Whether a reply was cut by the output limit (OpenAI's `length`; `max_tokens` from some compatible servers). */
export function wasCut(finishReason: string | null): boolean {
  return finishReason === 'length' || finishReason === 'max_tokens';
}

/**
 * The messages a continuation adds to the request: the text so far as the assistant's own, and the
 * ask to go on. They live only in that request; the turn keeps the joined reply.
 */
export function continuationMessages(partial: string): ChatMessage[] {
  return [
    { role: 'assistant', content: partial, toolCalls: [] },
    { role: 'user', content: CONTINUE_PROMPT },
  ];
}
