import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type Tool, defineTool } from '../agent/tool.js';
import type { MemoryStore } from '../memory/memory-types.js';
import { contentSchema, keySchema, tagsSchema } from '../memory/memory-fields.js';
import { type TagFilters, renderSourcesBlock } from './context-block.js';
import type { KnowledgeRetriever } from './knowledge-retriever.js';
import type { Source, SourceList } from './sources.js';

/** Models ask for more than they read; a tool result of a hundred chunks only burns context. */
const TOOL_TOP_K_MAX = 20;
const TOOL_TOP_K_DEFAULT = 5;

export interface ChatToolsOptions {
  memories: MemoryStore;
  knowledge?: KnowledgeRetriever | undefined;
  /** The turn's agent: fixed here, never a tool argument, so a model cannot reach another agent's memories. */
  agentId: string;
  /** The request's tag filters also bound what the search tools can see. */
  filters: TagFilters;
  sources: SourceList;
  /** Called with the sources a tool call added, keyed by tool call id, so events can report them. */
  onSources?: (toolCallId: string, added: Source[]) => void;
}

const searchArgs = z.strictObject({
  query: z.string().min(1).max(2000).describe('What to look for, in natural language'),
  topK: z.number().int().min(1).max(TOOL_TOP_K_MAX).optional().describe(`How many results (default ${TOOL_TOP_K_DEFAULT})`),
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function createChatTools(options: ChatToolsOptions): Tool<any>[] {
  const { memories, knowledge, agentId, filters, sources } = options;
  const report = (toolCallId: string, added: Source[]) => {
    if (added.length > 0) options.onSources?.(toolCallId, added);
    return renderSourcesBlock(added);
  };

  const tools: Tool<z.ZodType>[] = [
    defineTool({
      name: 'search_memories',
      description: "Semantic search over the user's saved memories. Results are numbered sources you can cite as [n].",
      parameters: searchArgs,
      async execute({ query, topK }, ctx) {
        const hits = await memories.search(query, { agentId, topK: topK ?? TOOL_TOP_K_DEFAULT, minScore: 0, ...filters });
        return report(ctx.toolCallId, hits.map((hit) => sources.addMemory(hit)));
      },
    }),
    defineTool({
      name: 'save_memory',
      description:
        'Save a memory for later (or replace the memory with the same key). Use only when the user asks you to remember something.',
      parameters: z.strictObject({
        key: keySchema.optional().describe('A short stable key, e.g. "favourite-tea"; generated when omitted'),
        content: contentSchema.describe('The fact to remember, as a self-contained sentence'),
        tags: tagsSchema.optional(),
      }),
      async execute({ key, content, tags }) {
        const { memory, created } = await memories.save({
          key: key ?? `chat-${randomUUID()}`,
          content,
          ...(tags ? { tags } : {}),
          metadata: { source: 'chat' },
          agentId,
        });
        return { saved: true, key: memory.key, created };
      },
    }),
    defineTool({
      name: 'delete_memory',
      description: 'Delete the memory with this key. Use only when the user asks you to forget something.',
      parameters: z.strictObject({ key: keySchema }),
      async execute({ key }) {
        const deleted = await memories.delete(key, { agentId });
        return deleted ? { deleted: true, key } : { deleted: false, key, reason: 'no memory with this key' };
      },
    }),
  ];
  if (knowledge) {
    tools.unshift(
      defineTool({
        name: 'search_knowledge',
        description: "Search the user's documents. Results are numbered sources you can cite as [n].",
        parameters: searchArgs,
        async execute({ query, topK }, ctx) {
          const hits = await knowledge.search(query, {
            topK: topK ?? TOOL_TOP_K_DEFAULT,
            signal: ctx.signal,
            ...(filters.tagsAny ? { tagsAny: filters.tagsAny } : {}),
            ...(filters.tagsAll ? { tagsAll: filters.tagsAll } : {}),
            ...(filters.tagsNone ? { tagsNone: filters.tagsNone } : {}),
          });
          return report(ctx.toolCallId, hits.map((hit) => sources.addDocument(hit)));
        },
      }),
    );
  }
  return tools;
}
