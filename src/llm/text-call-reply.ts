import { randomBytes } from 'node:crypto';
import type { AgentEvent } from './agent-types.js';
import { wasCut } from './continuation.js';
import type { AssistantMessage } from './messages.js';
import { FENCE_LANGUAGES, TEXT_TOOL_CALL_OPENERS, type TextToolCall, parseTextToolCalls } from './text-tool-calls.js';

const FENCE = '```';
/** A reply's beginning longer than this without telling is an answer: whitespace alone must not hold the stream. */
const UNDECIDED_MAX_CHARS = 256;

/**
 * A model's reply read for tool calls written as text, for one turn. While a reply streams, deltas
 * that may be the start of such calls are held back: a client must not be shown `<tool_call>…` as
 * the answer being written. Once the reply is whole, the held text is either dropped (it was calls)
 * or sent on as one delta (it was an answer after all).
 */
export interface TextCallReader {
  /** What the model call reports its events to: the turn's own listener, deltas held back where needed. */
  onEvent: ((event: AgentEvent) => void) | undefined;
  /** The reply, its text turned into calls (with ids of their own) when it is nothing but calls of offered tools. */
  read(message: AssistantMessage): AssistantMessage;
}

/** `offers`: whether a tool may be called now (asked when a reply is read). */
export function createTextCallReader(enabled: boolean, onEvent: ((event: AgentEvent) => void) | undefined, offers: (name: string) => boolean): TextCallReader {
  if (!enabled) {
    return {
      onEvent,
      read(message) {
        return message;
      },
    };
  }
  if (!onEvent) {
    // Nothing streamed to hold back: only the whole reply is read.
    return {
      onEvent,
      read(message) {
        const calls = textCalls(message, offers);
        return calls ? withCalls(message, calls) : message;
      },
    };
  }
  let mode: 'undecided' | 'held' | 'passing' = 'undecided';
  let held: string[] = [];
  let heldChars = 0;
  let heldIteration = 0;
  const release = () => {
    const text = held.join('');
    held = [];
    heldChars = 0;
    if (text !== '') onEvent({ type: 'delta', text, iteration: heldIteration });
  };
  const listener = (event: AgentEvent) => {
    // Nothing held back (a reply not streamed, or one already let through): the event goes on as it is.
    if (mode === 'passing' || (event.type !== 'delta' && held.length === 0)) return onEvent(event);
    // A whole reply that is not calls after all goes out before the event that ends its request, as it would have unheld.
    // A reply cut by the output limit is continued: its calls may be finished by the continuation.
    if (event.type === 'turn_end' && !wasCut(event.finishReason) && !parseTextToolCalls(held.join(''), offers)) release();
    if (event.type !== 'delta') return onEvent(event);
    held.push(event.text);
    heldChars += event.text.length;
    heldIteration = event.iteration;
    if (mode === 'held') return;
    const decided = heldChars > UNDECIDED_MAX_CHARS ? 'passing' : decide(held.join('').trimStart());
    if (decided === 'held') mode = 'held';
    else if (decided === 'passing') {
      mode = 'passing';
      release();
    }
  };
  return {
    onEvent: listener,
    read(message) {
      const calls = textCalls(message, offers);
      if (calls) {
        held = [];
        heldChars = 0;
      } else if (held.length > 0) release();
      mode = 'undecided';
      if (!calls) return message;
      return withCalls(message, calls);
    },
  };
}

function textCalls(message: AssistantMessage, offers: (name: string) => boolean): TextToolCall[] | undefined {
  return message.toolCalls.length === 0 && mayBeCalls(message.content) ? parseTextToolCalls(message.content, offers) : undefined;
}

/** The reply as the calls its text was, each with an id of its own. */
function withCalls(message: AssistantMessage, calls: readonly TextToolCall[]): AssistantMessage {
  return { ...message, content: null, toolCalls: calls.map((call) => ({ id: `call_${randomBytes(12).toString('hex')}`, ...call })) };
}

/**
 * Whether text may be calls: every spelling opens with `<`, `[` or a fence after whitespace. A reply
 * that starts otherwise (almost every answer) is not parsed at all.
 */
function mayBeCalls(text: string | null): text is string {
  if (!text) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Whitespace as `trim` sees it, in its common forms; a rarer one makes the parser decide.
    if (c === 32 || (c >= 9 && c <= 13)) continue;
    return c > 127 || c === 60 || c === 91 || c === 96;
  }
  return false;
}

/** Whether a reply's beginning may be calls written as text (`held`), is not (`passing`), or cannot tell yet (`undecided`). */
function decide(start: string): 'held' | 'passing' | 'undecided' {
  if (start === '') return 'undecided';
  if (start.startsWith(FENCE)) return fenceDecision(start);
  for (const opener of TEXT_TOOL_CALL_OPENERS) {
    if (start.startsWith(opener)) return 'held';
    if (opener.startsWith(start)) return 'undecided';
  }
  return 'passing';
}

/** A fence holds calls only when labelled json (or not at all) and its first character is `{` or `[`. */
function fenceDecision(start: string): 'held' | 'passing' | 'undecided' {
  const newline = start.indexOf('\n');
  const language = (newline === -1 ? start.slice(FENCE.length) : start.slice(FENCE.length, newline)).trim().toLowerCase();
  if (!FENCE_LANGUAGES.some((name) => name.startsWith(language))) return 'passing';
  if (newline === -1) return 'undecided';
  if (language !== '' && !FENCE_LANGUAGES.includes(language)) return 'passing';
  const first = start.slice(newline + 1).trimStart()[0];
  if (first === undefined) return 'undecided';
  return first === '{' || first === '[' ? 'held' : 'passing';
}
