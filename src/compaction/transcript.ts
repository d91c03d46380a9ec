import type { ChatMessage } from '../llm/messages.js';
import { clipChars, truncateMiddle } from './clip-text.js';

export interface TranscriptOptions {
  /** Tool output is bulky and mostly re-derivable; its head and tail carry what matters. */
  maxToolResultChars?: number;
  maxArgumentsChars?: number;
}

/**
 * Messages as plain text for a summarising prompt. Speakers are labelled in prose rather than
 * replayed as chat messages, so the summariser reads the exchange instead of continuing it.
 */
export function renderTranscript(messages: readonly ChatMessage[], options: TranscriptOptions = {}): string {
  const maxTool = options.maxToolResultChars ?? 1_200;
  const maxArgs = options.maxArgumentsChars ?? 400;
  const names = new Map<string, string>();
  const lines: string[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        break;
      case 'user':
        lines.push(`User: ${m.content}`);
        break;
      case 'assistant':
        if (m.content?.trim()) lines.push(`Assistant: ${m.content}`);
        for (const call of m.toolCalls) {
          names.set(call.id, call.name);
          lines.push(`Assistant called ${call.name}(${clipChars(call.arguments, maxArgs)})`);
        }
        break;
      case 'tool': {
        const label = m.isError ? 'Tool error' : 'Tool result';
        lines.push(`${label} (${names.get(m.toolCallId) ?? 'tool'}): ${truncateMiddle(m.content, maxTool)}`);
        break;
      }
    }
  }
  return lines.join('\n');
}
