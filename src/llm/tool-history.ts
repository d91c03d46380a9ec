import type { ChatMessage, ToolMessage } from './messages.js';

export const MISSING_TOOL_RESULT = 'Error: this tool call produced no result (it was interrupted or never ran).';

/**
 * Providers reject a request (400) when an assistant tool call has no matching tool message, or
 * when a tool message answers no call. Histories get into that state after an abort or crash
 * mid-turn, so we repair instead of failing every later request of the conversation.
 */
export function repairToolResults(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let pending: string[] = [];
  const flushPending = () => {
    for (const id of pending) out.push({ role: 'tool', toolCallId: id, content: MISSING_TOOL_RESULT, isError: true } satisfies ToolMessage);
    pending = [];
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      const at = pending.indexOf(message.toolCallId);
      // An orphan (or second) result for a call: drop it.
      if (at === -1) continue;
      pending.splice(at, 1);
      out.push(message);
      continue;
    }
    flushPending();
    out.push(message);
    if (message.role === 'assistant') pending = message.toolCalls.map((c) => c.id);
  }
  flushPending();
  return out;
}
