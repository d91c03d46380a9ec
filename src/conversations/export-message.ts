import type { ConversationExport, StoredMessage } from './conversation-types.js';

/** A stored message as the API shows it (and exports it): flat, with only its role's fields. */
export function toExportMessage({ seq, turn, message, metadata, createdAt }: StoredMessage): ConversationExport['messages'][number] {
  return {
    seq,
    turn,
    role: message.role as 'user' | 'assistant' | 'tool',
    content: message.content,
    ...(message.role === 'assistant' ? { toolCalls: message.toolCalls } : {}),
    ...(message.role === 'tool' ? { toolCallId: message.toolCallId, isError: message.isError === true } : {}),
    metadata,
    createdAt: createdAt.toISOString(),
  };
}
