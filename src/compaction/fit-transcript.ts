import type { ChatMessage } from '../llm/messages.js';
import { truncateMiddle } from './clip-text.js';
import { estimateTextTokens } from './token-estimate.js';
import { renderTranscript } from './transcript.js';

/**
 * A transcript of `messages` within `maxTokens`: tool output is squeezed first, then the middle of
 * the whole text, keeping the question at the start and the answer at the end.
 */
export function fitTranscript(messages: readonly ChatMessage[], maxTokens: number): string {
  let text = renderTranscript(messages);
  if (estimateTextTokens(text) <= maxTokens) return text;
  text = renderTranscript(messages, { maxToolResultChars: 200, maxArgumentsChars: 120 });
  for (let attempt = 0; attempt < 8; attempt++) {
    const tokens = estimateTextTokens(text);
    if (tokens <= maxTokens) return text;
    text = truncateMiddle(text, Math.floor((text.length * maxTokens * 0.9) / tokens));
  }
  return text;
}
