import { estimateTextTokens } from './token-estimate.js';

const ELLIPSIS = '…';

/** At most `maxChars` UTF-16 units, never splitting a surrogate pair; marks the cut with an ellipsis. */
export function clipChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 0) return '';
  let end = maxChars - ELLIPSIS.length;
  // A cut between the halves of a pair would leave a lone surrogate, which Postgres cannot store.
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  return text.slice(0, Math.max(0, end)) + ELLIPSIS;
}

/**
 * The longest prefix of `text` estimated at no more than `maxTokens`, cut after a sentence or at
 * least a word when one is near, so a clipped summary still reads as prose.
 */
export function clipToTokens(text: string, maxTokens: number): string {
  if (estimateTextTokens(text) <= maxTokens) return text;
  if (maxTokens <= 1) return '';
  // Binary search on the length: the estimate is monotone in the prefix, up to one piece.
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (estimateTextTokens(text.slice(0, mid)) + 1 <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  let prefix = text.slice(0, lo);
  if (prefix.length > 0 && isHighSurrogate(prefix.charCodeAt(prefix.length - 1))) prefix = prefix.slice(0, -1);
  const sentence = Math.max(prefix.lastIndexOf('. '), prefix.lastIndexOf('.\n'), prefix.lastIndexOf('\n'));
  const word = prefix.lastIndexOf(' ');
  const cut = sentence > prefix.length * 0.6 ? sentence + 1 : word > prefix.length * 0.8 ? word : prefix.length;
  return prefix.slice(0, cut).trimEnd() + ELLIPSIS;
}

/**
 * Keeps the head and the tail of a long text (where tool output puts its summary lines and its
 * errors) and says how much was cut, so the model knows the result is incomplete.
 */
export function truncateMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = (cut: number) => `\n…[${cut} characters cut to fit the context window]…\n`;
  const room = Math.max(0, maxChars - marker(text.length).length);
  let head = Math.ceil(room * 0.7);
  let tailStart = text.length - (room - head);
  if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head -= 1;
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1;
  return text.slice(0, head) + marker(tailStart - head) + text.slice(tailStart);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
