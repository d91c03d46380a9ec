/**
 * Tool calls a model wrote as text instead of sending them natively: local servers without a tool
 * parser (Ollama, llama.cpp, vLLM) pass the model's own call syntax through as the reply's content.
 * Four spellings are read, each the whole reply (whitespace aside):
 *
 * - `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, one or more (Hermes, Qwen)
 * - `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]` (Mistral)
 * - `<function=name>{…}</function>`, one or more (Llama 3.x)
 * - a JSON object or array of `{name, arguments}` alone in a fenced block (```` ``` ```` or ```` ```json ````)
 *
 * All or nothing: bad JSON, a name that is not offered, or any text around the calls and the reply
 * is an answer, left as it is. Every step reads forward from where the last one ended (`indexOf`,
 * `JSON.parse`), never back, so the time is linear in the reply's length whatever it holds.
 */

/** A call read from text: the tool's name and its arguments as JSON text, like a native call's. */
export interface TextToolCall {
  name: string;
  arguments: string;
}

const HERMES_OPEN = '<tool_call>';
const HERMES_CLOSE = '</tool_call>';
const MISTRAL_OPEN = '[TOOL_CALLS]';
const LLAMA_OPEN = '<function=';
const LLAMA_CLOSE = '</function>';
const FENCE = '```';
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** The languages a fenced block of calls may be labelled with, beside none. */
export const FENCE_LANGUAGES: readonly string[] = ['json', 'tool_call', 'tool_calls'];

/** How a reply that is calls written as text begins, for a streamer deciding whether to hold its deltas back. */
export const TEXT_TOOL_CALL_OPENERS: readonly string[] = [HERMES_OPEN, MISTRAL_OPEN, LLAMA_OPEN, FENCE];

/**
 * The calls `text` is made of, when it is nothing but calls of offered tools (`isOffered`), in the
 * order written; undefined when it is anything else.
 */
export function parseTextToolCalls(text: string, isOffered: (name: string) => boolean): TextToolCall[] | undefined {
  const body = text.trim();
  let calls: TextToolCall[] | undefined;
  if (body.startsWith(HERMES_OPEN)) calls = taggedCalls(body, HERMES_OPEN, HERMES_CLOSE, (inner) => callsOf(parseJson(inner), false));
  else if (body.startsWith(MISTRAL_OPEN)) calls = callsOf(parseJson(body.slice(MISTRAL_OPEN.length)), true);
  else if (body.startsWith(LLAMA_OPEN)) calls = taggedCalls(body, LLAMA_OPEN, LLAMA_CLOSE, llamaCall);
  else if (body.startsWith(FENCE)) calls = fencedCalls(body);
  if (!calls || calls.length === 0) return undefined;
  return calls.every((call) => isOffered(call.name)) ? calls : undefined;
}

/** Blocks `open…close` one after another, nothing but whitespace between them. */
function taggedCalls(body: string, open: string, close: string, read: (inner: string) => TextToolCall[] | undefined): TextToolCall[] | undefined {
  const calls: TextToolCall[] = [];
  let at = 0;
  while (at < body.length) {
    if (!body.startsWith(open, at)) return undefined;
    const end = body.indexOf(close, at + open.length);
    if (end === -1) return undefined;
    const found = read(body.slice(at + open.length, end));
    if (!found) return undefined;
    calls.push(...found);
    at = skipWhitespace(body, end + close.length);
  }
  return calls;
}

/** `name>{arguments}` (what follows `<function=` up to `</function>`). */
function llamaCall(inner: string): TextToolCall[] | undefined {
  const gt = inner.indexOf('>');
  if (gt === -1) return undefined;
  const name = inner.slice(0, gt);
  if (!TOOL_NAME.test(name)) return undefined;
  const rest = inner.slice(gt + 1).trim();
  const args = argumentsOf(rest === '' ? {} : parseJson(rest));
  return args === undefined ? undefined : [{ name, arguments: args }];
}

/** A fenced block, the whole body: ```` ```json ```` (or no language), JSON, ```` ``` ````. */
function fencedCalls(body: string): TextToolCall[] | undefined {
  const newline = body.indexOf('\n');
  if (newline === -1 || !body.endsWith(FENCE) || body.length < newline + 1 + FENCE.length) return undefined;
  const language = body.slice(FENCE.length, newline).trim().toLowerCase();
  if (language !== '' && !FENCE_LANGUAGES.includes(language)) return undefined;
  const inner = body.slice(newline + 1, body.length - FENCE.length);
  // A second block, or text between two: not one block of calls alone.
  if (inner.includes(FENCE)) return undefined;
  return callsOf(parseJson(inner), true);
}

/** `{name, arguments}`, or (where `allowArray`) an array of them. */
function callsOf(value: unknown, allowArray: boolean): TextToolCall[] | undefined {
  const items = Array.isArray(value) && allowArray ? value : [value];
  const calls: TextToolCall[] = [];
  for (const item of items) {
    if (!isRecord(item) || typeof item.name !== 'string' || !TOOL_NAME.test(item.name)) return undefined;
    // Llama's JSON tool format says `parameters`; the others `arguments`. Both at once is ambiguous.
    if ('arguments' in item && 'parameters' in item) return undefined;
    const args = argumentsOf('arguments' in item ? item.arguments : 'parameters' in item ? item.parameters : {});
    if (args === undefined) return undefined;
    calls.push({ name: item.name, arguments: args });
  }
  return calls;
}

/** Arguments as JSON text: an object, or a string holding one (some models encode them twice, as OpenAI's wire does). */
function argumentsOf(value: unknown): string | undefined {
  const object = typeof value === 'string' ? parseJson(value) : value;
  return isRecord(object) ? JSON.stringify(object) : undefined;
}

const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // A syntax error, or (deeply nested input) a RangeError: either way not a call.
    return NOT_JSON;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function skipWhitespace(text: string, from: number): number {
  let at = from;
  while (at < text.length && /\s/.test(text[at] as string)) at++;
  return at;
}
