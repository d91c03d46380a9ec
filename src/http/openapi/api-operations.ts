import { z } from 'zod';
import type { RerankerChoice } from '../../retrieval/rerank/reranker-choice.js';
import { chatReplySchema, chatStreamEventSchema } from '../schemas/chat-reply-schemas.js';
import { chatBody } from '../schemas/chat-schemas.js';
import { conversationPageSchema, conversationReplySchema, importConversationReplySchema } from '../schemas/conversation-reply-schemas.js';
import { conversationAgentQuery, conversationIdParams, importConversationBody, listConversationsQuery } from '../schemas/conversation-schemas.js';
import {
  chunkPageSchema,
  documentPageSchema,
  documentReplySchema,
  ingestReplySchema,
  searchReplySchema,
} from '../schemas/document-reply-schemas.js';
import { docsAssetParams } from '../schemas/docs-schemas.js';
import { documentIdParams, ingestFormFields, ingestJsonBody, listChunksQuery, listDocumentsQuery, searchBody } from '../schemas/document-schemas.js';
import {
  deleteByTagsReplySchema,
  memoryPageSchema,
  memoryReplySchema,
  memorySearchReplySchema,
  saveMemoryReplySchema,
  tagCountsReplySchema,
} from '../schemas/memory-reply-schemas.js';
import {
  agentIdQuery,
  deleteByTagsInput,
  keyParams,
  listMemoriesQuery,
  putMemoryBody,
  saveMemoryBody,
  searchMemoriesBody,
  tagCountsQuery,
} from '../schemas/memory-schemas.js';
import { healthReplySchema, notReadyReplySchema, readyReplySchema } from '../schemas/operations-reply-schemas.js';

export interface HeaderSpec {
  description: string;
  schema: z.ZodType;
}

export interface ReplySpec {
  description: string;
  /** By media type; none for a reply without a body (204). */
  content?: Record<string, z.ZodType>;
  headers?: Record<string, HeaderSpec>;
}

/** An error reply of this route; the document narrows the error body's `code` to `codes`. */
export interface ErrorSpec {
  status: number;
  codes: [string, ...string[]];
  description: string;
  headers?: Record<string, HeaderSpec>;
}

/** One route as the document describes it, with the zod schemas the route itself validates with. */
export interface ApiOperation {
  method: 'get' | 'post' | 'put' | 'delete';
  /** Hono's pattern, as registered on the app: `/v1/memories/:key`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: { required: boolean; description?: string; content: Record<string, z.ZodType> };
  responses: Record<number, ReplySpec>;
  /** Errors of this route alone; those every route of its kind can answer are added by the document. */
  errors?: ErrorSpec[];
}

/** What the routes' schemas are built from: the same values `createApp` gives them. */
export interface ApiOperationsOptions {
  maxTopK: number;
  rerankers: readonly RerankerChoice[];
}

export const TAGS = {
  memories: 'Memories',
  documents: 'Documents',
  search: 'Search',
  chat: 'Chat',
  conversations: 'Conversations',
  operations: 'Operations',
  documentation: 'Documentation',
} as const;

const retryAfter: HeaderSpec = { description: 'Seconds to wait before retrying.', schema: z.number().int().min(1) };
const notFound = (what: string): ErrorSpec => ({ status: 404, codes: ['not_found'], description: `No such ${what}.` });
const json = (schema: z.ZodType) => ({ 'application/json': schema });

/**
 * Every route of the API. A route registered on the app but missing here fails the OpenAPI
 * test, so the document cannot silently fall behind the routes.
 */
export function apiOperations({ maxTopK, rerankers }: ApiOperationsOptions): ApiOperation[] {
  const memoryLocation: HeaderSpec = { description: 'The new memory: `/v1/memories/{key}?agentId={agentId}`.', schema: z.string() };
  return [
    // Operations and documentation, outside /v1: no API key, no rate limit.
    {
      method: 'get',
      path: '/healthz',
      operationId: 'health',
      tag: TAGS.operations,
      summary: 'Liveness: the process is up',
      responses: { 200: { description: 'Alive.', content: json(healthReplySchema) } },
    },
    {
      method: 'get',
      path: '/readyz',
      operationId: 'readiness',
      tag: TAGS.operations,
      summary: 'Readiness: the database answers and the embedder is open',
      description: 'The database must answer `SELECT 1` within 2 s, and the embedder be open with its workers alive.',
      responses: {
        200: { description: 'Ready to serve.', content: json(readyReplySchema) },
        503: { description: 'Not ready: `not_ready`, with each failing check in `details` and `checks`.', content: json(notReadyReplySchema) },
      },
    },
    {
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      tag: TAGS.operations,
      summary: 'Prometheus metrics',
      description: 'Prometheus text exposition format. Open like the probes: keep it off the public side of a proxy.',
      responses: { 200: { description: 'The metrics.', content: { 'text/plain': z.string() } } },
    },
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'openApiDocument',
      tag: TAGS.documentation,
      summary: 'This OpenAPI 3.1 document',
      responses: { 200: { description: 'The document.', content: json(z.record(z.string(), z.unknown())) } },
    },
    {
      method: 'get',
      path: '/docs',
      operationId: 'docs',
      tag: TAGS.documentation,
      summary: 'Interactive documentation (Swagger UI) of this document',
      responses: { 200: { description: 'An HTML page.', content: { 'text/html': z.string() } } },
    },
    {
      method: 'get',
      path: '/docs/:asset',
      operationId: 'docsAsset',
      tag: TAGS.documentation,
      summary: "A script or style sheet of the documentation page (Swagger UI's, from the swagger-ui-dist package)",
      params: docsAssetParams,
      responses: { 200: { description: 'The file.', content: { 'text/css': z.string(), 'text/javascript': z.string() } } },
    },

    // Memories.
    {
      method: 'post',
      path: '/v1/memories/search',
      operationId: 'searchMemories',
      tag: TAGS.memories,
      summary: 'Search memories (hybrid, vector or BM25)',
      description:
        'Hybrid by default: vector and BM25 candidates, filtered by agent and tags in SQL, fused by weighted reciprocal rank ' +
        'fusion. `minScore` is a cosine threshold on the vector side (refused in text mode). The agent id may come in the body ' +
        'or the query string, not both with different values.',
      query: agentIdQuery,
      body: { required: true, content: json(searchMemoriesBody(maxTopK)) },
      responses: { 200: { description: 'The best `topK` memories, best first.', content: json(memorySearchReplySchema) } },
    },
    {
      method: 'post',
      path: '/v1/memories',
      operationId: 'saveMemory',
      tag: TAGS.memories,
      summary: 'Save a memory (upsert by agent and key)',
      description:
        'Replaces the content, tags and metadata of an existing key (fields left out are cleared); without `key`, a new UUID ' +
        'is the key. The vector is recomputed only when the content changed.',
      query: agentIdQuery,
      body: { required: true, content: json(saveMemoryBody) },
      responses: {
        200: { description: 'An existing memory was replaced.', content: json(saveMemoryReplySchema) },
        201: { description: 'A new memory.', content: json(saveMemoryReplySchema), headers: { Location: memoryLocation } },
      },
    },
    {
      method: 'put',
      path: '/v1/memories/:key',
      operationId: 'putMemory',
      tag: TAGS.memories,
      summary: 'Save a memory under a key',
      description: 'As `POST /v1/memories`, with the key in the path.',
      params: keyParams,
      query: agentIdQuery,
      body: { required: true, content: json(putMemoryBody) },
      responses: {
        200: { description: 'An existing memory was replaced.', content: json(saveMemoryReplySchema) },
        201: { description: 'A new memory.', content: json(saveMemoryReplySchema), headers: { Location: memoryLocation } },
      },
    },
    {
      method: 'get',
      path: '/v1/memories/:key',
      operationId: 'getMemory',
      tag: TAGS.memories,
      summary: 'Read a memory',
      params: keyParams,
      query: agentIdQuery,
      responses: { 200: { description: 'The memory.', content: json(memoryReplySchema) } },
      errors: [notFound('memory for this agent')],
    },
    {
      method: 'delete',
      path: '/v1/memories/:key',
      operationId: 'deleteMemory',
      tag: TAGS.memories,
      summary: 'Delete a memory',
      params: keyParams,
      query: agentIdQuery,
      responses: { 204: { description: 'Deleted.' } },
      errors: [notFound('memory for this agent')],
    },
    {
      method: 'get',
      path: '/v1/memories',
      operationId: 'listMemories',
      tag: TAGS.memories,
      summary: 'List memories (tag filters, cursor pagination)',
      query: listMemoriesQuery,
      responses: { 200: { description: 'One page, newest first.', content: json(memoryPageSchema) } },
    },
    {
      method: 'delete',
      path: '/v1/memories',
      operationId: 'deleteMemoriesByTags',
      tag: TAGS.memories,
      summary: 'Delete every memory with given tags',
      description:
        'The filter comes in the query string or in a JSON body (same fields), not both. `tagsAny` or `tagsAll` must name a ' +
        'tag: `tagsNone` alone would delete almost everything.',
      query: deleteByTagsInput,
      body: { required: false, content: json(deleteByTagsInput) },
      responses: { 200: { description: 'How many were deleted.', content: json(deleteByTagsReplySchema) } },
    },
    {
      method: 'get',
      path: '/v1/tags',
      operationId: 'countTags',
      tag: TAGS.memories,
      summary: 'How many memories carry each tag',
      query: tagCountsQuery,
      responses: { 200: { description: 'Tags and their counts.', content: json(tagCountsReplySchema) } },
    },

    // Chat.
    {
      method: 'post',
      path: '/v1/chat',
      operationId: 'chat',
      tag: TAGS.chat,
      summary: "Answer a message from the agent's memories and documents, with citations",
      description:
        'Recalls the `topK` best memories and document chunks, then lets the model answer (and call `search_memories`, ' +
        '`save_memory`, `delete_memory`, `search_knowledge`), citing sources as `[n]`. Without a configured LLM the reply is ' +
        'extractive. With `conversationId`, the turn continues that stored conversation (compacted to fit the model), or starts ' +
        'one under that id. JSON by default; Server-Sent Events with `stream: true` or `Accept: text/event-stream` (an explicit ' +
        '`stream: false` wins): `retrieval`, then `delta`s, `tool_start`/`tool_end` and `compaction`, then `done` (the JSON reply) or ' +
        '`error` (the error body plus its `status`). Disconnecting cancels the LLM request and running tools.',
      body: { required: true, content: json(chatBody(maxTopK)) },
      responses: {
        200: {
          description: 'The answer: one JSON reply, or a stream of events (`ChatStreamEvent`, one per SSE frame).',
          content: { 'application/json': chatReplySchema, 'text/event-stream': chatStreamEventSchema },
        },
      },
      errors: [
        notFound('conversation for this agent: `conversationId` belongs to another agent'),
        { status: 422, codes: ['context_overflow', 'content_filtered'], description: "The message and its sources exceed the model's window, or the provider's content filter refused." },
        { status: 429, codes: ['llm_rate_limited'], description: 'The LLM provider rate-limits the server.', headers: { 'Retry-After': retryAfter } },
        { status: 502, codes: ['llm_auth_error', 'llm_error'], description: "The provider rejected the server's key, or the request." },
        { status: 503, codes: ['llm_unavailable'], description: 'The provider failed (5xx, connection).', headers: { 'Retry-After': retryAfter } },
        { status: 504, codes: ['llm_timeout'], description: 'No answer from the provider within LLM_TIMEOUT_MS.' },
      ],
    },

    // Conversations.
    {
      method: 'get',
      path: '/v1/conversations',
      operationId: 'listConversations',
      tag: TAGS.conversations,
      summary: "List an agent's conversations, newest first",
      query: listConversationsQuery,
      responses: { 200: { description: 'One page.', content: json(conversationPageSchema) } },
    },
    {
      method: 'post',
      path: '/v1/conversations/import',
      operationId: 'importConversation',
      tag: TAGS.conversations,
      summary: 'Import an exported conversation, under a new id',
      description:
        'The body is what `GET /v1/conversations/{id}/export` wrote. The history must be one a turn can continue: messages ' +
        'numbered 1, 2, 3…, turns that start with the user, every tool call answered before the next message, and ' +
        "checkpoints and summary that cover turns the conversation has. `?agentId=` imports for another agent than the export's. " +
        'The upload size limit applies, not the body limit.',
      query: conversationAgentQuery,
      body: { required: true, content: json(importConversationBody) },
      responses: {
        201: {
          description: 'The imported conversation.',
          content: json(importConversationReplySchema),
          headers: { Location: { description: 'The new conversation: `/v1/conversations/{id}?agentId={agentId}`.', schema: z.string() } },
        },
      },
    },
    {
      method: 'get',
      path: '/v1/conversations/:id',
      operationId: 'getConversation',
      tag: TAGS.conversations,
      summary: 'Read a conversation: messages, checkpoints, summary and token estimate',
      params: conversationIdParams,
      query: conversationAgentQuery,
      responses: { 200: { description: 'The conversation.', content: json(conversationReplySchema) } },
      errors: [notFound('conversation for this agent')],
    },
    {
      method: 'get',
      path: '/v1/conversations/:id/export',
      operationId: 'exportConversation',
      tag: TAGS.conversations,
      summary: 'Export a conversation (the body `POST /v1/conversations/import` takes)',
      params: conversationIdParams,
      query: conversationAgentQuery,
      responses: {
        200: {
          description: 'The export, as an attachment.',
          content: json(importConversationBody),
          headers: { 'Content-Disposition': { description: '`attachment; filename="conversation-{id}.json"`', schema: z.string() } },
        },
      },
      errors: [notFound('conversation for this agent')],
    },
    {
      method: 'delete',
      path: '/v1/conversations/:id',
      operationId: 'deleteConversation',
      tag: TAGS.conversations,
      summary: 'Delete a conversation',
      params: conversationIdParams,
      query: conversationAgentQuery,
      responses: { 204: { description: 'Deleted.' } },
      errors: [notFound('conversation for this agent')],
    },

    // Documents and knowledge search.
    {
      method: 'post',
      path: '/v1/documents',
      operationId: 'ingestDocument',
      tag: TAGS.documents,
      summary: 'Ingest a document (JSON text, or a multipart file upload)',
      description:
        'Chunks by structure to at most `maxTokens` with `overlapTokens` between neighbours, embeds the chunks and indexes ' +
        'runs of them up to `passageTokens` as BM25 passages, ' +
        'all in one transaction. Identical text again answers the stored document (`unchanged`); a known `source` with new ' +
        'text replaces that document (`replaced`, same id). A multipart upload carries `file` (.txt, .md, .html, .pdf) and ' +
        'the same fields as text: `tags` repeated, comma-separated or a JSON array, `metadata` as a JSON object.',
      body: {
        required: true,
        content: {
          'application/json': ingestJsonBody,
          'multipart/form-data': ingestFormFields.safeExtend({ file: z.file().meta({ description: 'The document: .txt, .md, .html or .pdf.' }) }),
        },
      },
      responses: {
        200: { description: '`unchanged` or `replaced`.', content: json(ingestReplySchema) },
        201: {
          description: '`created`.',
          content: json(ingestReplySchema),
          headers: { Location: { description: 'The new document: `/v1/documents/{id}`.', schema: z.string() } },
        },
      },
      errors: [
        { status: 415, codes: ['unsupported_media_type'], description: 'The file type is not supported.' },
        { status: 422, codes: ['unprocessable_document'], description: 'The file is corrupt, or holds no text.' },
      ],
    },
    {
      method: 'get',
      path: '/v1/documents',
      operationId: 'listDocuments',
      tag: TAGS.documents,
      summary: 'List documents (tag filters, cursor pagination)',
      query: listDocumentsQuery,
      responses: { 200: { description: 'One page, newest first.', content: json(documentPageSchema) } },
    },
    {
      method: 'get',
      path: '/v1/documents/:id',
      operationId: 'getDocument',
      tag: TAGS.documents,
      summary: 'Read a document',
      params: documentIdParams,
      responses: { 200: { description: 'The document.', content: json(documentReplySchema) } },
      errors: [notFound('document')],
    },
    {
      method: 'get',
      path: '/v1/documents/:id/chunks',
      operationId: 'listDocumentChunks',
      tag: TAGS.documents,
      summary: "A document's chunks, in order",
      params: documentIdParams,
      query: listChunksQuery,
      responses: { 200: { description: 'One page of chunks.', content: json(chunkPageSchema) } },
      errors: [notFound('document')],
    },
    {
      method: 'delete',
      path: '/v1/documents/:id',
      operationId: 'deleteDocument',
      tag: TAGS.documents,
      summary: 'Delete a document with its chunks',
      params: documentIdParams,
      responses: { 204: { description: 'Deleted.' } },
      errors: [notFound('document')],
    },
    {
      method: 'post',
      path: '/v1/search',
      operationId: 'searchKnowledge',
      tag: TAGS.search,
      summary: 'Search document chunks (hybrid, vector or BM25; optional rerank)',
      description:
        'Each retriever returns `candidateK` candidates, filtered by tags in SQL: BM25 scores passages (runs of a document\'s ' +
        'chunks), the vector side chunks, which count for their passage at its nearest chunk. Hybrid mode fuses passages by ' +
        'weighted reciprocal rank fusion. Each hit is one passage, citing its chunk that covers most of the query (vector ' +
        'mode: its nearest). A `reranker` reorders the first `candidateK` and returns the best `topK` with `rerankScore`; without ' +
        `one, RERANKER_DEFAULT applies. Rerankers on this server: ${rerankers.join(', ')}.`,
      body: { required: true, content: json(searchBody(maxTopK, rerankers)) },
      responses: { 200: { description: 'The best `topK` passages, best first, each as the chunk it cites, with citation fields.', content: json(searchReplySchema) } },
    },
  ];
}
