import type { ChatMessage, ImagePart } from '../../llm/messages.js';
import { validationError } from '../../api/errors.js';
import { imageUrlProblem } from '../../api/schemas/content-parts-schemas.js';
import { type CompletionMessage, imagePartsOf, textOf } from '../../api/schemas/openai-schemas.js';

/** What a completion request asks of a turn, read from its messages. */
export interface CompletionTurn {
  /** The system (and developer) messages: the turn's instructions in place of the agent's. */
  instructions: string | undefined;
  /** Every message but the system ones, as the client sent them: what it holds, less the reply to come. */
  sent: CompletionMessage[];
  /** The messages before the turn, system ones left out, as the client sent them: what its thread key hashes. */
  before: CompletionMessage[];
  /** The same, as the model is sent them. */
  history: ChatMessage[];
  /** The last user message: a new turn's question. */
  question?: string;
  /** The question's images, passed through to the model. */
  questionImages?: ImagePart[];
  /** Trailing tool results: the answers to a paused turn's client tool calls. */
  toolOutputs?: Array<{ toolCallId: string; output: string }>;
}

/**
 * Splits the messages as OpenAI clients send them (the whole thread every time) into the turn
 * memrag runs: the last user message is its question, or trailing tool results answer the calls
 * of the assistant message before them; everything earlier is history.
 */
export function readCompletionTurn(messages: readonly CompletionMessage[]): CompletionTurn {
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer');
  const instructions = system.length > 0 ? system.map((m) => textOf(m.content)).join('\n\n') : undefined;
  const indexed = messages.flatMap((message, index) => (isConversational(message) ? [{ message, index }] : []));
  const last = indexed.at(-1)!;
  if (last.message.role === 'user') {
    const before = indexed.slice(0, -1).map(({ message }) => message);
    const questionImages = imagesOf(last.message.content);
    return {
      instructions,
      sent: indexed.map(({ message }) => message),
      before,
      history: before.map(toChatMessage),
      question: textOf(last.message.content),
      ...(questionImages ? { questionImages } : {}),
    };
  }
  let first = indexed.length - 1;
  while (first > 0 && indexed[first - 1]!.message.role === 'tool') first -= 1;
  const caller = indexed[first - 1];
  const calls = caller?.message.role === 'assistant' ? (caller.message.tool_calls ?? []) : [];
  const results = indexed.slice(first);
  for (const { message, index } of results) {
    if (message.role === 'tool' && !calls.some((call) => call.id === message.tool_call_id))
      throw validationError([{ path: `messages.${index}.tool_call_id`, message: 'answers no call of the assistant message before the tool results' }], 'body');
  }
  const before = indexed.slice(0, first).map(({ message }) => message);
  return {
    instructions,
    sent: indexed.map(({ message }) => message),
    before,
    history: before.map(toChatMessage),
    toolOutputs: results.map(({ message }) => ({ toolCallId: (message as { tool_call_id: string }).tool_call_id, output: textOf(message.content) })),
  };
}

type ConversationalMessage = Exclude<CompletionMessage, { role: 'system' | 'developer' }>;

const isConversational = (message: CompletionMessage): message is ConversationalMessage => message.role !== 'system' && message.role !== 'developer';

function toChatMessage(message: ConversationalMessage): ChatMessage {
  switch (message.role) {
    case 'user': {
      const images = imagesOf(message.content);
      return { role: 'user', content: textOf(message.content), ...(images ? { images } : {}) };
    }
    case 'assistant':
      return {
        role: 'assistant',
        content: textOf(message.content) || null,
        toolCalls: (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments })),
      };
    case 'tool':
      return { role: 'tool', toolCallId: message.tool_call_id, content: textOf(message.content) };
  }
}

const imagesOf = (content: CompletionMessage['content']): ImagePart[] | undefined => {
  const parts = imagePartsOf(content);
  return parts.length > 0 ? parts.map(({ url, detail }) => ({ url, ...(detail ? { detail } : {}) })) : undefined;
};

/**
 * Refuses (400, naming the part) an image that cannot be sent: more than `maxPerMessage` in a
 * message, or a URL neither https nor a data URL of an image within `maxBytes`.
 */
export function checkCompletionImages(messages: readonly CompletionMessage[], limits: { maxBytes: number; maxPerMessage: number }): void {
  const issues = messages.flatMap((message, i) =>
    imagePartsOf(message.content).flatMap(({ index, url }, n) => {
      const path = `messages.${i}.content.${index}`;
      if (n >= limits.maxPerMessage) return [{ path, message: `a message may carry at most ${limits.maxPerMessage} images (IMAGE_MAX_PER_MESSAGE)` }];
      const problem = imageUrlProblem(url, limits.maxBytes);
      return problem ? [{ path: `${path}.image_url.url`, message: problem }] : [];
    }),
  );
  if (issues.length > 0) throw validationError(issues, 'body');
}
