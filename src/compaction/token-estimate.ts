import type { ChatMessage, ToolSpec } from '../llm/messages.js';
import { approximateTokenCount } from '../text/approximate-token-count.js';

/**
 * Role markers and separators around every message in a chat template; OpenAI's o200k chat
 * encoding spends 4 per message plus 3 priming the reply, and other templates are close to that.
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;
export const REPLY_PRIMING_TOKENS = 3;
/** The function-call wrapper around a tool call's name and arguments (type, id, braces). */
export const TOOL_CALL_OVERHEAD_TOKENS = 8;
/**
 * One image sent with a message, whatever its size: the bytes are not at hand here (a stored image
 * is loaded as a data URL) and providers resize before counting anyway. OpenAI's high-detail cost
 * is 85 tokens plus 170 per 512-px tile of the image scaled to 768 px on its short side, so 765
 * for a square and 1,105 for a 2:1 image; other vision models land in the same order of magnitude.
 * Flat and at the top of that range, it errs high like the text estimate.
 */
export const IMAGE_TOKENS = 1_100;

/**
 * A tokenizer-free estimate of a chat prompt's tokens. The model behind an OpenAI-compatible URL
 * may use any vocabulary, so no single real tokenizer is right; the estimate is built to err high
 * instead, and that error is the safety margin.
 *
 * Calibration (`scripts/calibrate-token-estimate.ts`, gpt-tokenizer's o200k and cl100k vocabularies
 * against this estimate): on 2,000 SciFact abstracts the real count was 0.58x the estimate on
 * average (p99 0.72, max 0.78); on JSON tool results 0.55x (max 0.72); on UUID-heavy JSON, the
 * worst case, 0.77x (max 0.86). So for the 100k-200k vocabularies of OpenAI, Llama 3 and Qwen the
 * estimate was above the truth by at least 16% in every sample. Small SentencePiece vocabularies
 * produce more tokens: against an 8k one (USE lite) the real count averaged 0.80x (p99 1.03x on
 * 40-word windows, see `approximateTokenCount`), which whole prompts average out, and the
 * compaction trigger (0.85 of the usable window by default) leaves another 15% on top.
 */
export function estimateTextTokens(text: string): number {
  if (text.length < CACHED_TEXT_MIN_CHARS) return approximateTokenCount(text);
  let tokens = textCache.get(text);
  if (tokens === undefined) {
    // Bounded by clearing: the working set is one conversation's history, far below the bound.
    if (textCache.size >= TEXT_CACHE_MAX_ENTRIES) textCache.clear();
    tokens = approximateTokenCount(text);
    textCache.set(text, tokens);
  }
  return tokens;
}

// A stored conversation is read back as new message objects on every turn; keyed by the text,
// its long messages are counted once per process rather than once per turn (hashing a string is
// much cheaper than tokenising it).
const CACHED_TEXT_MIN_CHARS = 256;
const TEXT_CACHE_MAX_ENTRIES = 50_000;
const textCache = new Map<string, number>();

// Messages are immutable once made, and a prompt is re-estimated on every LLM call of a long
// conversation: counting each message once keeps compaction linear in what changed.
const cache = new WeakMap<ChatMessage, number>();

export function estimateMessageTokens(message: ChatMessage): number {
  const cached = cache.get(message);
  if (cached !== undefined) return cached;
  let tokens = MESSAGE_OVERHEAD_TOKENS + estimateTextTokens(message.content ?? '');
  if (message.role === 'assistant') {
    for (const call of message.toolCalls) {
      tokens += TOOL_CALL_OVERHEAD_TOKENS + estimateTextTokens(call.name) + estimateTextTokens(call.arguments);
    }
  } else if (message.role === 'user' || message.role === 'tool') {
    // Only images with a URL travel: a stored one not loaded for this request is left out of it.
    for (const image of message.images ?? []) if (image.url !== undefined) tokens += IMAGE_TOKENS;
  }
  cache.set(message, tokens);
  return tokens;
}

/** Every message plus the reply priming: what one request's `messages` cost. */
export function estimateMessagesTokens(messages: readonly ChatMessage[]): number {
  let tokens = REPLY_PRIMING_TOKENS;
  for (const message of messages) tokens += estimateMessageTokens(message);
  return tokens;
}

/**
 * Tool definitions travel with every request. Providers render the JSON schema more tersely than
 * JSON (OpenAI as TypeScript-like declarations), so the JSON text is an upper bound.
 */
export function estimateToolSpecTokens(tools: readonly ToolSpec[]): number {
  let tokens = 0;
  for (const tool of tools) tokens += estimateTextTokens(JSON.stringify(tool)) + MESSAGE_OVERHEAD_TOKENS;
  return tokens;
}
