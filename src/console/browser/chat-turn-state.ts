import type { Schemas } from '../../client/memrag-client.js';
import { describeError } from './api-session.js';
import type { ChatStreamEvent } from './chat-stream.js';
import type { Range } from './marked-text.js';

export type ChatSource = Schemas['ChatSource'];
export type Citation = Schemas['Citation'];
export type PausedReply = Schemas['PausedReply'];

/** What happened during a turn besides the answer: tool calls and compactions, in order. */
export type Activity =
  | { kind: 'tool'; id: string; name: string; arguments: unknown; result?: string; isError?: boolean }
  | { kind: 'compaction'; strategy: string; tokensBefore: number; tokensAfter: number; limit: number };

/** One question and its answer as the console shows it, built up from the stream's events. */
export interface ChatTurn {
  question: string;
  answer: string;
  /** What `[n]` can point at: the recalled sources, then those tools found; the reply's citations once done. */
  sources: ChatSource[];
  citations: Citation[];
  activity: Activity[];
  runId?: string;
  conversationId?: string;
  /** Its number in a stored conversation (1, 2, 3…); unknown for a turn streamed here. */
  number?: number;
  /** Opened from a link to this turn (a memory's origin, a cited turn): focused, with the quoted part of its question marked. */
  linked?: { quote?: Range };
  state: 'streaming' | 'done' | 'paused' | 'failed';
  pause?: PausedReply;
  mode?: 'llm' | 'extractive';
  note?: string;
  error?: string;
}

export function newTurn(question: string): ChatTurn {
  return { question, answer: '', sources: [], citations: [], activity: [], state: 'streaming' };
}

/** The turn after one event of its stream. */
export function applyChatEvent(turn: ChatTurn, event: ChatStreamEvent): ChatTurn {
  switch (event.event) {
    case 'retrieval':
      return { ...turn, runId: event.data.runId, conversationId: event.data.conversationId, sources: [...turn.sources, ...event.data.sources] };
    case 'delta':
      return { ...turn, answer: turn.answer + event.data.text };
    case 'tool_start':
      return { ...turn, activity: [...turn.activity, { kind: 'tool', id: event.data.id, name: event.data.name, arguments: event.data.arguments }] };
    case 'tool_end':
      return {
        ...turn,
        sources: [...turn.sources, ...event.data.sources],
        activity: turn.activity.map((a) =>
          a.kind === 'tool' && a.id === event.data.id ? { ...a, result: event.data.result, isError: event.data.isError } : a,
        ),
      };
    case 'compaction':
      return { ...turn, activity: [...turn.activity, { kind: 'compaction', ...event.data }] };
    case 'done': {
      const { pause: _resolved, ...rest } = turn;
      return {
        ...rest,
        state: 'done',
        answer: event.data.answer,
        citations: event.data.citations,
        mode: event.data.mode,
        runId: event.data.runId,
        conversationId: event.data.conversationId,
        ...(event.data.note ? { note: event.data.note } : {}),
      };
    }
    case 'requires_action':
    case 'requires_approval':
      return { ...turn, state: 'paused', pause: event.data, runId: event.data.runId, conversationId: event.data.conversationId };
    case 'error':
      return { ...turn, state: 'failed', error: describeError(event.data, { status: event.data.status }) };
  }
}
