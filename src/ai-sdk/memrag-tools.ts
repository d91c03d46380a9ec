import { tool } from 'ai';
import { z } from 'zod';
import { type MemragClientOptions, createMemragClient } from '../client/memrag-client.js';
import { dataOf } from './memrag-api-error.js';
import { memragBlockTools } from './memrag-block-tools.js';

export interface MemragToolsOptions extends MemragClientOptions {
  /** The user the memories, past turns and blocks are of; without it, the agent's shared memories and blocks and every user's turns. */
  userId?: string;
  /** The agent whose memories and conversations these are; the server's `default` agent when left out. */
  agentId?: string;
  /** A conversation whose own turns `recallTurns` leaves out (the one the model is in). */
  conversationId?: string;
}

const TOP_K_MAX = 20;
const topK = (fallback: number) => z.number().int().min(1).max(TOP_K_MAX).default(fallback).describe(`How many results, 1 to ${TOP_K_MAX}.`);
const query = z.string().min(1).describe('What to look for, in words: a question or the facts sought.');

/**
 * AI SDK tools over a memrag server, for `generateText({ tools: memragTools(...) })` and its
 * siblings: `searchMemories`, `saveMemory`, `searchDocuments` and `recallTurns`, and working memory's
 * `listBlocks`, `readBlock`, `appendToBlock`, `replaceInBlock` and `rewriteBlock`. Each calls the API
 * through the typed client and gives the model compact JSON; an API error is thrown as a
 * MemragApiError (its status, code and message), which the AI SDK reports as the tool's error.
 */
export function memragTools(options: MemragToolsOptions) {
  const client = createMemragClient(options);
  const { userId, agentId, conversationId } = options;
  const scope = { ...(agentId ? { agentId } : {}), ...(userId ? { userId } : {}) };

  return {
    ...memragBlockTools(client, { agentId, userId }),

    searchMemories: tool({
      description:
        'Search the long-term memories kept about the user (and the shared ones): preferences, facts, decisions. ' +
        'Returns the best matches first, each with its key and content.',
      inputSchema: z.object({ query, topK: topK(5) }),
      execute: async (input, { abortSignal }) => {
        const found = dataOf(
          'searchMemories',
          await client.POST('/v1/memories/search', {
            body: { query: input.query, topK: input.topK, ...scope, ...(userId ? { includeShared: true } : {}) },
            signal: abortSignal,
          }),
        );
        return {
          memories: found.hits.map((hit) => ({
            key: hit.memory.key,
            content: hit.memory.content,
            score: round(hit.score),
            ...(hit.memory.tags.length > 0 ? { tags: hit.memory.tags } : {}),
            shared: hit.memory.userId === null,
          })),
        };
      },
    }),

    saveMemory: tool({
      description:
        'Save a lasting fact about the user (a preference, a decision, something to remember) as a memory. One fact per ' +
        'memory, in a full sentence. Saving under an existing key replaces that memory.',
      inputSchema: z.object({
        content: z.string().min(1).describe('The fact, as one self-contained sentence.'),
        key: z.string().min(1).max(256).optional().describe('A stable key to replace the memory saved under it; a new key when left out.'),
        tags: z.array(z.string().min(1).max(64)).max(16).optional().describe('A few short tags to filter by later.'),
      }),
      execute: async (input, { abortSignal }) => {
        const saved = dataOf(
          'saveMemory',
          await client.POST('/v1/memories', {
            body: { content: input.content, ...(input.key ? { key: input.key } : {}), ...(input.tags ? { tags: input.tags } : {}), ...scope },
            signal: abortSignal,
          }),
        );
        return { key: saved.memory.key, created: saved.created, status: saved.memory.status };
      },
    }),

    searchDocuments: tool({
      description:
        'Search the ingested documents (manuals, notes, pages) for passages about a subject. Returns the best passages ' +
        'first, each with its document title, section headings and text.',
      inputSchema: z.object({ query, topK: topK(5) }),
      execute: async (input, { abortSignal }) => {
        const found = dataOf('searchDocuments', await client.POST('/v1/search', { body: { query: input.query, topK: input.topK }, signal: abortSignal }));
        return {
          passages: found.hits.map((hit) => ({
            documentId: hit.documentId,
            chunkId: hit.chunkId,
            title: hit.title,
            ...(hit.headingPath.length > 0 ? { section: hit.headingPath.join(' > ') } : {}),
            text: hit.text,
            score: round(hit.rerankScore ?? hit.score),
          })),
        };
      },
    }),

    recallTurns: tool({
      description:
        'Recall past exchanges with the user from earlier conversations: what they asked and what was answered, with when. ' +
        'Use it when the user refers to something discussed before.',
      inputSchema: z.object({ query, topK: topK(3) }),
      execute: async (input, { abortSignal }) => {
        const found = dataOf(
          'recallTurns',
          await client.POST('/v1/turns/search', {
            body: { query: input.query, topK: input.topK, ...scope, ...(conversationId ? { excludeConversationId: conversationId } : {}) },
            signal: abortSignal,
          }),
        );
        const hits = 'hits' in found ? found.hits : [];
        return {
          turns: hits.map((hit) => ({
            conversationId: hit.conversationId,
            turn: hit.turn,
            at: hit.at,
            question: hit.question,
            answer: hit.answer,
            score: round(hit.score),
          })),
        };
      },
    }),
  };
}

export type MemragTools = ReturnType<typeof memragTools>;

const round = (score: number) => Math.round(score * 10_000) / 10_000;
