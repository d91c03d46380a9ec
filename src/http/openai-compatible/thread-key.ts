import { createHash } from 'node:crypto';
import { type CompletionMessage, textOf } from '../../api/schemas/openai-schemas.js';

/**
 * A hash of a thread's messages as its client holds them (system messages left out: they are
 * instructions, which a client may change between requests). A reply is marked with the key of
 * the messages plus itself; the client's next request starts with exactly those, so the key of
 * what comes before its new turn finds the conversation it continues, without storing the client's
 * history a second time. Whitespace at the ends of a text is not counted: clients trim.
 */
export function threadKey(agentId: string, userId: string | null, messages: readonly CompletionMessage[]): string {
  const canonical = messages.map((message) => {
    switch (message.role) {
      case 'user':
        return ['u', textOf(message.content).trim()];
      case 'assistant':
        return ['a', textOf(message.content).trim(), (message.tool_calls ?? []).map((call) => [call.id, call.function.name, call.function.arguments])];
      case 'tool':
        return ['t', message.tool_call_id, textOf(message.content).trim()];
      default:
        return ['s'];
    }
  });
  return createHash('sha256')
    .update(JSON.stringify([agentId, userId ?? '', canonical]))
    .digest('base64url');
}
