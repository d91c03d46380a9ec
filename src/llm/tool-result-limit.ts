/**
 * A tool result cut to `maxChars`, the rest replaced by a note saying how much was cut: one large
 * result (a long document, a client tool's dump) would otherwise crowd the conversation out of the
 * model's window, and the model should know it is reading a part.
 */
export function limitToolResult(content: string, maxChars: number | undefined): string {
  if (maxChars === undefined || content.length <= maxChars) return content;
  // Not between the two halves of a surrogate pair: the kept part must stay valid text.
  const high = content.charCodeAt(maxChars - 1);
  const keep = high >= 0xd800 && high <= 0xdbff ? maxChars - 1 : maxChars;
  const cut = content.length - keep;
  return `${content.slice(0, keep)}\n\n[${cut} of ${content.length} characters cut: the result is longer than this agent's limit of ${maxChars}]`;
}
