import type { StoredMessage } from './conversation-types.js';

/**
 * A turn's question is stored with what its largest request carried besides the history (system
 * prompt, tool definitions, the question with its sources and tool results): the measure by which
 * the summary is extended ahead and the next request is estimated.
 */
export const FIXED_TOKENS_KEY = 'fixedTokens';

/** The latest turn's measure, if any turn recorded one. */
export function measuredFixedTokens(messages: readonly StoredMessage[]): number | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const value = messages[i]!.metadata[FIXED_TOKENS_KEY];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  }
  return undefined;
}
