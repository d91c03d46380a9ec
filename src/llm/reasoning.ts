/**
 * A model's reasoning, kept apart from its answer. Providers send it in a field of its own
 * (`reasoning_content`, DeepSeek and vLLM; `reasoning`, OpenRouter and Ollama), or, served raw,
 * R1-style models write it at the start of their text as `<think>…</think>`: both end up here as
 * reasoning, never as answer text.
 */

export const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

const OPEN = '<think>';
const CLOSE = '</think>';

/** The reasoning field of a message or a stream delta, whichever name the provider uses. */
export function reasoningField(part: unknown): string | undefined {
  if (typeof part !== 'object' || part === null) return undefined;
  const record = part as { reasoning_content?: unknown; reasoning?: unknown };
  const value = record.reasoning_content ?? record.reasoning;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A whole reply's text split into its leading `<think>` block and the answer after it. */
export function splitThinking(text: string): { content: string; reasoning: string } {
  const splitter = createThinkingSplitter();
  const head = splitter.push(text);
  const tail = splitter.end();
  return { content: head.content + tail.content, reasoning: head.reasoning + tail.reasoning };
}

export interface ThinkingSplitter {
  /** The next piece of streamed text: what of it is answer and what reasoning (either may be ''). */
  push(text: string): { content: string; reasoning: string };
  /** The end of the stream: whatever was held back to decide. */
  end(): { content: string; reasoning: string };
}

/**
 * Splits streamed text whose tags may arrive cut anywhere (`<thi` then `nk>`): text that might
 * still become a tag is held back until the next piece decides it. Only a block at the very start
 * (after whitespace) counts; a `<think>` later in an answer is the answer's.
 */
export function createThinkingSplitter(): ThinkingSplitter {
  let phase: 'start' | 'thinking' | 'answer' = 'start';
  let held = '';
  let afterClose = false;

  const push = (text: string): { content: string; reasoning: string } => {
    if (phase === 'answer') return { content: stripLeading(text), reasoning: '' };
    held += text;
    if (phase === 'start') {
      const trimmed = held.trimStart();
      if (trimmed.length < OPEN.length && OPEN.startsWith(trimmed)) return none();
      if (!trimmed.startsWith(OPEN)) {
        phase = 'answer';
        const content = held;
        held = '';
        return { content, reasoning: '' };
      }
      phase = 'thinking';
      held = trimmed.slice(OPEN.length);
    }
    const close = held.indexOf(CLOSE);
    if (close >= 0) {
      const reasoning = held.slice(0, close);
      const rest = held.slice(close + CLOSE.length);
      held = '';
      phase = 'answer';
      afterClose = true;
      return { content: stripLeading(rest), reasoning };
    }
    // Hold back what could be the start of the closing tag.
    const keep = partialSuffix(held, CLOSE);
    const reasoning = held.slice(0, held.length - keep);
    held = held.slice(held.length - keep);
    return { content: '', reasoning };
  };

  // The blank line models put between `</think>` and the answer is not the answer's.
  const stripLeading = (text: string): string => {
    if (!afterClose) return text;
    const stripped = text.replace(/^\s+/, '');
    if (stripped !== '') afterClose = false;
    return stripped;
  };

  const end = (): { content: string; reasoning: string } => {
    const rest = held;
    held = '';
    // An unclosed block is all reasoning; text that only looked like the start of a tag is answer.
    if (phase === 'thinking') return { content: '', reasoning: rest };
    return { content: rest, reasoning: '' };
  };

  return { push, end };
}

function none(): { content: string; reasoning: string } {
  return { content: '', reasoning: '' };
}

/** The length of the longest end of `text` that begins `tag`. */
function partialSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}
