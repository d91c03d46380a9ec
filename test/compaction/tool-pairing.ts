import type { ChatMessage } from '../../src/llm/messages.js';

/**
 * Problems with tool pairing in a request: a call without its result right after it, or a
 * result that answers no call of the assistant message before it. Empty when the request is valid.
 */
export function toolPairingProblems(messages: readonly ChatMessage[]): string[] {
  const problems: string[] = [];
  let open: Set<string> | undefined;
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      if (!open?.delete(m.toolCallId)) problems.push(`message ${i}: tool result ${m.toolCallId} answers no pending call`);
      return;
    }
    if (open && open.size > 0) problems.push(`message ${i}: calls ${[...open].join(', ')} have no result`);
    open = m.role === 'assistant' ? new Set(m.toolCalls.map((c) => c.id)) : undefined;
  });
  if (open && open.size > 0) problems.push(`end: calls ${[...open].join(', ')} have no result`);
  return problems;
}
