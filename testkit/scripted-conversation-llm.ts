import type { ChatMessage, ToolSpec } from '../src/llm/messages.js';
import { CHECKPOINT_INSTRUCTIONS } from '../src/compaction/llm-checkpoint-writer.js';
import { estimateMessagesTokens, estimateToolSpecTokens } from '../src/compaction/token-estimate.js';
import { type ScriptedReply, type ScriptedRequest, reply } from './scripted-llm-server.js';

/** The agent's messages back from what the OpenAI client put on the wire. */
export function fromWire(messages: ScriptedRequest['body']['messages']): ChatMessage[] {
  return messages.map((m): ChatMessage => {
    const content = typeof m.content === 'string' ? m.content : null;
    switch (m.role) {
      case 'system':
        return { role: 'system', content: content ?? '' };
      case 'user':
        return { role: 'user', content: content ?? '' };
      case 'tool':
        return { role: 'tool', toolCallId: String(m.tool_call_id), content: content ?? '' };
      default: {
        const calls = (m.tool_calls as Array<{ id: string; function: { name: string; arguments: string } }> | undefined) ?? [];
        return { role: 'assistant', content, toolCalls: calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) };
      }
    }
  });
}

/** What a request costs by the same estimate the compactor budgets with: messages plus tool definitions. */
export function requestTokens(request: ScriptedRequest): number {
  const tools: ToolSpec[] = (request.body.tools ?? []).map((t) => ({
    name: t.function.name,
    description: t.function.description ?? '',
    parameters: (t.function.parameters ?? {}) as Record<string, unknown>,
  }));
  return estimateMessagesTokens(fromWire(request.body.messages)) + estimateToolSpecTokens(tools);
}

export type RequestKind = 'chat' | 'checkpoint' | 'summary';

export function kindOf(request: ScriptedRequest): RequestKind {
  const system = String(request.body.messages[0]?.content ?? '');
  if (system === CHECKPOINT_INSTRUCTIONS) return 'checkpoint';
  if (!request.body.tools) return 'summary';
  return 'chat';
}

const FACTS = /remember[^.\n"]*/gi;

/**
 * A model for long conversations: each chat turn calls `search_memories` once, then answers; the
 * checkpoint writer and the summariser keep the sentences with facts to remember, as a real model
 * told to keep every fact would. `failSummaries` answers every summarising request with a 500.
 */
export interface ConversationModelOptions {
  failSummaries?: boolean;
  /** How long a summarising request waits before its answer; a function is asked at each request. */
  summaryDelayMs?: number | (() => number);
  /** The tool a question calls first; default: `search_memories` for every question. Undefined: an answer at once. */
  toolFor?: (question: string) => { name: string; arguments: Record<string, unknown> } | undefined;
}

export function conversationModel(options: ConversationModelOptions = {}) {
  return (request: ScriptedRequest): ScriptedReply => {
    const kind = kindOf(request);
    const input = String(request.body.messages.at(-1)?.content ?? '');
    if (kind !== 'chat') {
      if (options.failSummaries) return reply.error(500, { message: 'summarizer down' });
      const facts = [...new Set(input.match(FACTS) ?? [])].join('; ');
      const delayMs = typeof options.summaryDelayMs === 'function' ? options.summaryDelayMs() : (options.summaryDelayMs ?? 0);
      if (kind === 'checkpoint') {
        const question = /User: ([^\n]*)/.exec(input)?.[1] ?? '';
        return reply.text(JSON.stringify({ summary: `Asked: ${question.slice(0, 80)}. ${facts}`, actionable_summary: 'Searched memories once; answered.' }), {
          delayMs,
        });
      }
      return reply.text(`The user asked about many topics. Facts: ${facts || 'none'}.`, { delayMs });
    }
    const last = request.body.messages.at(-1)!;
    if (last.role === 'user') {
      const question = /Question:\n([\s\S]*)$/.exec(String(last.content))?.[1] ?? '';
      const tool = options.toolFor ? options.toolFor(question) : { name: 'search_memories', arguments: { query: question.slice(0, 60), topK: 3 } };
      if (tool) return reply.toolCalls([{ id: `call_${request.body.messages.length}`, name: tool.name, arguments: JSON.stringify(tool.arguments) }]);
    }
    return reply.text(`Here is what your notes say about that [1]. ${'It is a long and detailed answer. '.repeat(6)}`);
  };
}
