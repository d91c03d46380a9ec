import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ToolSpec } from '../llm/messages.js';
import { type Tool, type ToolShape, defineTool, toolSpecOf } from '../llm/tool.js';
import type { MemoryActor, MemoryStore } from '../memory/memory-types.js';
import { contentSchema, keySchema } from '../memory/memory-fields.js';
import { tagsSchema } from '../retrieval/tags.js';
import { type TagFilters, memoryScope, renderSourcesBlock } from './context-block.js';
import type { KnowledgeRetriever } from '../retrieval/knowledge.js';
import { RECALL_TURNS_SHAPE, type RecallTurnsOptions, createRecallTurnsTool } from './recall-turns-tool.js';
import type { Source } from '../retrieval/source.js';
import type { SourceList } from './sources.js';

/** Models ask for more than they read; a tool result of a hundred chunks only burns context. */
export const TOOL_TOP_K_MAX = 20;
const TOOL_TOP_K_DEFAULT = 5;

export interface ChatToolsOptions {
  memories: MemoryStore;
  knowledge?: KnowledgeRetriever;
  /** The turn's agent: fixed here, never a tool argument, so a model cannot reach another agent's memories. */
  agentId: string;
  /**
   * The turn's user, fixed likewise: searches see theirs and the shared memories, saves and
   * deletes touch theirs only. Null: no user, and the shared memories are the ones written.
   */
  userId: string | null;
  /** Recorded in the memories' history as the author of the tools' changes. */
  actor: Extract<MemoryActor, { type: 'tool' }>;
  /** The request's tag filters also bound what the search tools can see. */
  filters: TagFilters;
  sources: SourceList;
  /** Called with the sources a tool call added, keyed by tool call id, so events can report them. */
  onSources?: (toolCallId: string, added: Source[]) => void;
  /** The most results one search returns, whatever the model asks: a small window affords fewer. */
  topKCap?: number;
  /** The stored conversation: recall_turns reopens its turns; no tool without one. */
  conversation?: RecallTurnsOptions;
}

const searchArgs = z.strictObject({
  query: z.string().min(1).max(2000),
  topK: z.number().int().min(1).max(TOOL_TOP_K_MAX).optional(),
});

const SEARCH_KNOWLEDGE = {
  name: 'search_knowledge',
  description: "Search the user's documents. Results are sources to cite as [n].",
  parameters: searchArgs,
} satisfies ToolShape;

const SEARCH_MEMORIES = {
  name: 'search_memories',
  description: "Search the user's saved memories. Results are sources to cite as [n].",
  parameters: searchArgs,
} satisfies ToolShape;

const SAVE_MEMORY = {
  name: 'save_memory',
  description: 'Save a memory (replacing one with the same key). Only when the user asks you to remember something.',
  parameters: z.strictObject({
    key: keySchema.optional().describe('short stable key, e.g. "favourite-tea"'),
    content: contentSchema.describe('a self-contained sentence'),
    tags: tagsSchema.optional(),
  }),
} satisfies ToolShape;

const DELETE_MEMORY = {
  name: 'delete_memory',
  description: 'Delete the memory with this key. Only when the user asks you to forget something.',
  parameters: z.strictObject({ key: keySchema }),
} satisfies ToolShape;

/**
 * The specs of the chat's tools that `permitted` allows, in the order a turn offers them, without
 * building the tools: what a prompt carries for them, counted before any turn runs. `recall_turns`
 * is counted as a conversation with turns has it.
 */
export function chatToolSpecs(permitted: ReadonlySet<string>, options: { knowledge: boolean }): ToolSpec[] {
  const shapes: ToolShape[] = [...(options.knowledge ? [SEARCH_KNOWLEDGE] : []), SEARCH_MEMORIES, SAVE_MEMORY, DELETE_MEMORY, RECALL_TURNS_SHAPE];
  return shapes.filter((shape) => permitted.has(shape.name)).map(toolSpecOf);
}

// biome-ignore lint/suspicious/noExplicitAny: tools of different argument schemas in one list.
export function createChatTools(options: ChatToolsOptions): Tool<any>[] {
  const { memories, knowledge, agentId, userId, actor, filters, sources } = options;
  const topKFor = (asked: number | undefined) => Math.min(asked ?? TOOL_TOP_K_DEFAULT, options.topKCap ?? TOOL_TOP_K_MAX);
  const scope = { agentId, userId };
  const report = (toolCallId: string, added: Source[]) => {
    if (added.length > 0) options.onSources?.(toolCallId, added);
    return renderSourcesBlock(added);
  };

  const tools: Tool<z.ZodType>[] = [
    defineTool({
      ...SEARCH_MEMORIES,
      async execute({ query, topK }, ctx) {
        const hits = await memories.search(query, { ...memoryScope(agentId, userId), topK: topKFor(topK), minScore: 0, ...filters });
        return report(
          ctx.toolCallId,
          hits.map((hit) => sources.addMemory(hit)),
        );
      },
    }),
    defineTool({
      ...SAVE_MEMORY,
      async execute({ key, content, tags }) {
        const { memory, created } = await memories.save({
          key: key ?? `chat-${randomUUID()}`,
          content,
          ...(tags ? { tags } : {}),
          metadata: { source: 'chat' },
          ...scope,
          actor,
        });
        // Said so that the model does not tell the user it will act on what it saved.
        if (memory.status === 'quarantined')
          return { saved: true, key: memory.key, created, status: 'quarantined', note: 'held for review: it reads as an instruction, not a fact' };
        return { saved: true, key: memory.key, created };
      },
    }),
    defineTool({
      ...DELETE_MEMORY,
      async execute({ key }) {
        const deleted = await memories.delete(key, scope, actor);
        return deleted ? { deleted: true, key } : { deleted: false, key, reason: 'no memory with this key' };
      },
    }),
  ];
  if (knowledge) {
    tools.unshift(
      defineTool({
        ...SEARCH_KNOWLEDGE,
        async execute({ query, topK }, ctx) {
          const hits = await knowledge.search(query, {
            topK: topKFor(topK),
            signal: ctx.signal,
            ...(filters.tagsAny ? { tagsAny: filters.tagsAny } : {}),
            ...(filters.tagsAll ? { tagsAll: filters.tagsAll } : {}),
            ...(filters.tagsNone ? { tagsNone: filters.tagsNone } : {}),
          });
          return report(
            ctx.toolCallId,
            hits.map((hit) => sources.addDocument(hit)),
          );
        },
      }),
    );
  }
  if (options.conversation && options.conversation.turns.length > 0) tools.push(createRecallTurnsTool(options.conversation));
  return tools;
}
