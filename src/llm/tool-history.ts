import type { ChatMessage, ToolMessage } from './messages.js';

export const MISSING_TOOL_RESULT = 'Error: this tool call produced no result (it was interrupted or never ran).';

/**
 * Providers reject a request (400) when an assistant tool call has no matching tool message, or
 * when a tool message answers no call. Histories get into that state after an abort or crash
 * mid-turn, so we repair instead of failing every later request of the conversation.
 */
export function repairToolResults(messages: readonly ChatMessage[]): ChatMessage[] {
  return appendRepaired([], messages, []);
}

/**
 * `before` and then `after`, repaired as one history, pushed onto `out` (returned): a request is
 * built in one pass, without joining the two into a copy first.
 */
export function appendRepaired(out: ChatMessage[], before: readonly ChatMessage[], after: readonly ChatMessage[]): ChatMessage[] {
  let pending: string[] = [];
  for (const messages of [before, after]) {
    for (const message of messages) {
      if (message.role === 'tool') {
        const at = pending.indexOf(message.toolCallId);
        // An orphan (or second) result for a call: drop it.
        if (at === -1) continue;
        pending.splice(at, 1);
        out.push(message);
        continue;
      }
      if (pending.length > 0) pending = flushMissing(out, pending);
      out.push(message);
      if (message.role === 'assistant' && message.toolCalls.length > 0) pending = message.toolCalls.map((c) => c.id);
    }
  }
  if (pending.length > 0) flushMissing(out, pending);
  return out;
}

function flushMissing(out: ChatMessage[], pending: readonly string[]): string[] {
  for (const id of pending) out.push({ role: 'tool', toolCallId: id, content: MISSING_TOOL_RESULT, isError: true } satisfies ToolMessage);
  return [];
}
