import type { Schemas } from '../../client/memrag-client.js';
import { describeError } from './api-session.js';
import type { ChatStreamEvent, PausedReply } from './chat-stream.js';
import type { Range } from './marked-text.js';

export type ChatSource = Schemas['ChatSource'];
export type Citation = Schemas['Citation'];
export type { PausedReply };

/** What happened during a turn besides the answer: tool calls, delegations, compactions, steering messages and retried model calls, in order. */
export type Activity =
  | { kind: 'tool'; id: string; name: string; arguments: unknown; result?: string; isError?: boolean }
  /** A `delegate` call's child run: `status` once it ended (or paused). */
  | { kind: 'delegate'; runId: string; role: string; agentId: string; status?: string }
  | { kind: 'compaction'; strategy: string; tokensBefore: number; tokensAfter: number; limit: number }
  | { kind: 'steer'; message: string }
  | { kind: 'retry'; attempt: number; delayMs: number; status: number | null; reason: string };

/**
 * An image of the question: one attached here (its data URL, shown as it is), one the conversation
 * keeps (fetched from its attachments route with the key), or an https one (a link: the CSP loads
 * no other origin's images).
 */
export type TurnImage = { kind: 'data'; url: string; name: string } | { kind: 'attachment'; attachmentId: string } | { kind: 'link'; url: string };

/** One question and its answer as the console shows it, built up from the stream's events. */
export interface ChatTurn {
  question: string;
  images: TurnImage[];
  answer: string;
  /** The model's reasoning as it streamed (`thinking`), never part of the answer; not stored with the conversation. */
  reasoning: string;
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
  /** Messages queued (`follow_up`) to start the conversation's next turns once this one completes. */
  followUps: { runId: string; message: string }[];
  mode?: 'llm' | 'extractive';
  note?: string;
  error?: string;
  /** The agent and user it was asked as (a turn streamed here): whose working memory its prompt carried. */
  scope?: TurnScope;
}

/** The agent and user a turn ran as. */
export interface TurnScope {
  agentId: string;
  userId: string | null;
}

export function newTurn(question: string, images: TurnImage[] = []): ChatTurn {
  return { question, images, answer: '', reasoning: '', sources: [], citations: [], activity: [], followUps: [], state: 'streaming' };
}

/** The turn after one event of its stream. */
export function applyChatEvent(turn: ChatTurn, event: ChatStreamEvent): ChatTurn {
  switch (event.event) {
    case 'retrieval':
      return { ...turn, runId: event.data.runId, conversationId: event.data.conversationId, sources: [...turn.sources, ...event.data.sources] };
    case 'delta':
      return { ...turn, answer: turn.answer + event.data.text };
    case 'thinking':
      return { ...turn, reasoning: turn.reasoning + event.data.text };
    case 'steer':
      return { ...turn, activity: [...turn.activity, { kind: 'steer', message: event.data.message }] };
    case 'retry':
      return { ...turn, activity: [...turn.activity, { kind: 'retry', ...event.data }] };
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
    case 'delegate_start':
      return { ...turn, activity: [...turn.activity, { kind: 'delegate', ...event.data }] };
    case 'delegate_end':
      return {
        ...turn,
        activity: turn.activity.map((a) => (a.kind === 'delegate' && a.runId === event.data.runId ? { ...a, status: event.data.status } : a)),
      };
    case 'done': {
      const { pause: _resolved, ...rest } = turn;
      // With `includeReasoning` the reply has it whole; the streamed pieces stand in when it has none.
      const { reasoning } = event.data as { reasoning?: string };
      return {
        ...rest,
        state: 'done',
        answer: event.data.answer,
        reasoning: reasoning ?? turn.reasoning,
        citations: event.data.citations,
        mode: event.data.mode,
        runId: event.data.runId,
        conversationId: event.data.conversationId,
        ...(event.data.note ? { note: event.data.note } : {}),
      };
    }
    case 'requires_action':
    case 'requires_approval':
    case 'paused':
      return { ...turn, state: 'paused', pause: event.data, runId: event.data.runId, conversationId: event.data.conversationId };
    case 'error':
      return { ...turn, state: 'failed', error: describeError(event.data, { status: event.data.status }) };
    default:
      // Model calls' frames (turn_start, turn_end) and a child run's own events (child) change nothing shown: its tree is a click away.
      return turn;
  }
}
