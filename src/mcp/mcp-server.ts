import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { memoryDeletedEntry } from '../api/memory-audit-entries.js';
import { memoryNotFound, missingMemoryError } from '../api/memory-not-found.js';
import { chatBody } from '../api/schemas/chat-schemas.js';
import { ingestJsonBody, searchBody } from '../api/schemas/document-schemas.js';
import { agentIdQuery, getMemoryQuery, keySchema, saveMemoryBody, searchMemoriesBody, tagCountsQuery } from '../api/schemas/memory-schemas.js';
import { readMoment } from '../api/schemas/valid-time-schema.js';
import type { AuditActor } from '../audit/audit-types.js';
import { DEFAULT_AGENT_ID } from '../memory/memory-types.js';
import { withEngineWeights } from '../retrieval/fusion-weights.js';
import { withDeadline } from './tool-deadline.js';
import { registerBlockTools } from './mcp-block-tools.js';
import { registerWorkflowTools } from './mcp-workflow-tools.js';
import { errorResult, jsonResult } from './tool-results.js';

export interface McpServerOptions {
  /** The tenant of the request's API key: every tool is bound to it, never given it as an argument. */
  tenantId: string;
  /** The HTTP request's signal: a client that goes away cancels the searches, ingestion and chat it started. */
  signal?: AbortSignal;
  /** Who the request's key says is calling: the audit log's "who" of what the tools delete. */
  actor: AuditActor;
}

const INSTRUCTIONS =
  'memrag stores memories (short facts, per agent and optionally per user) and documents (chunked and indexed), and ' +
  'answers from both with citations. Save what should be remembered with save_memory and recall it with ' +
  'search_memories; add reference text with ingest_document and find it with search_knowledge; chat answers a ' +
  'question from memories and documents together. Every tool answers JSON.';

/**
 * The MCP tools over one tenant's stores: the REST API's operations, with the REST API's input
 * schemas (so limits and refusals are the same) and its replies as JSON text. A new server is
 * built per request (see ../http/routes/mcp.ts), which is cheap: it only registers closures.
 */
export function createMcpServer(ctx: AppContext, { tenantId, signal, actor }: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'memrag', version: '0.1.0' }, { instructions: INSTRUCTIONS });
  const memories = ctx.memories.forTenant(tenantId);
  const maxTopK = ctx.config.MAX_TOP_K;
  const timeoutMs = ctx.config.REQUEST_TIMEOUT_MS;
  const logInternal = (tool: string) => (err: unknown) => ctx.logger.error({ err, tenantId }, `MCP tool ${tool} failed`);

  /** REQUEST_TIMEOUT_MS bounds each call, as it bounds each /v1 request; `chat` opts out as /v1/chat does. */
  const answer = async (tool: string, work: (signal: AbortSignal | undefined) => Promise<unknown>, bounded = true): Promise<CallToolResult> => {
    try {
      return jsonResult(await withDeadline(bounded ? timeoutMs : 0, signal, work));
    } catch (err) {
      return errorResult(err, logInternal(tool));
    }
  };

  server.registerTool(
    'search_memories',
    {
      title: 'Search memories',
      description:
        'Find saved memories relevant to a query, best first, as `{"hits":[{"memory":{key,content,tags,...},"score"}]}`. ' +
        'Hybrid (vector + BM25) by default; `mode` "vector" or "text" uses one side. `agentId` defaults to "default"; ' +
        "`userId` narrows to one user's memories (with `includeShared`, the agent's shared ones too); without it, every " +
        "user's memories and the shared ones are searched. `tagsAny`, " +
        '`tagsAll`, `tagsNone` and `metadata` filter before ranking.',
      inputSchema: searchMemoriesBody(maxTopK),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    // A model never reads what the firewall held back from it, whatever it asks for.
    ({ query, ...options }) =>
      answer('search_memories', async () => ({ hits: await memories.search(query, { ...withEngineWeights(options), includeQuarantined: false }) })),
  );

  server.registerTool(
    'save_memory',
    {
      title: 'Save a memory',
      description:
        'Save a fact for later, or replace the memory with the same `key` (fields left out are cleared). Without `key`, a ' +
        'new UUID is the key. `agentId` defaults to "default"; with `userId` it is that user\'s memory, without it the ' +
        'agent\'s shared one, recalled in every user\'s chats. Answers `{"memory":{...},"created":true|false}`.',
      inputSchema: saveMemoryBody,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    // The model chose these words: screened by the firewall as the chat's own tool is.
    (body) => answer('save_memory', () => memories.save({ ...body, key: body.key ?? randomUUID(), untrusted: true })),
  );

  server.registerTool(
    'get_memory',
    {
      title: 'Read a memory',
      description:
        'Read the memory with this `key` in the scope of `agentId` (default "default") and `userId` (absent: the agent\'s ' +
        'shared memory of the key, never a user\'s), as `{"memory":{key,content,tags,...}}`. `asOf`: as it was then; ' +
        '`validAt` (default now): only if its fact held then, else an error saying when it holds.',
      inputSchema: getMemoryQuery.extend({ key: keySchema }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ key, ...query }) =>
      answer('get_memory', async () => {
        const { asOf, validAt, ...scope } = readMoment(query);
        const moment = { ...(asOf ? { asOf } : {}), ...(validAt ? { validAt } : {}) };
        const memory = await memories.get(key, scope, moment);
        if (!memory) throw await missingMemoryError(memories, key, scope, moment);
        // A model never reads what the firewall held back from it, as in search_memories.
        if (memory.status === 'quarantined') throw memoryNotFound(key, scope);
        return { memory };
      }),
  );

  server.registerTool(
    'delete_memory',
    {
      title: 'Delete a memory',
      description:
        'Delete the memory with this `key` in the scope of `agentId` (default "default") and `userId` (absent: the ' +
        'agent\'s shared memories). Answers `{"deleted":true}`; a key the scope does not hold is an error.',
      inputSchema: agentIdQuery.extend({ key: keySchema }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ key, ...scope }) =>
      answer('delete_memory', async () => {
        if (!(await memories.delete(key, scope))) throw memoryNotFound(key, scope);
        await ctx.audit.forTenant(tenantId).record({ ...memoryDeletedEntry(key, scope), actor });
        return { deleted: true };
      }),
  );

  server.registerTool(
    'list_tags',
    {
      title: 'List tags',
      description:
        'The tags of the memories and how many memories carry each, as `{"tags":[{"tag","count"}]}`; the same filters as ' +
        "search_memories narrow what is counted (without `userId`, every user's memories and the shared ones are); " +
        '`agentId` defaults to "default".',
      // The query-string schema, but with a JSON boolean where the query string has "true"/"false".
      inputSchema: tagCountsQuery.extend({ includeShared: z.boolean().optional().meta({ description: "With `userId`: the agent's shared memories too." }) }),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (filter) => answer('list_tags', async () => ({ tags: await memories.tagCounts(filter) })),
  );

  server.registerTool(
    'search_knowledge',
    {
      title: 'Search documents',
      description:
        'Find passages of the ingested documents relevant to a query, best first, each with its document, title, heading ' +
        'path and character offsets for citing: `{"hits":[...]}`. Hybrid (vector + BM25) by default; `tagsAny`, ' +
        `\`tagsAll\` and \`tagsNone\` filter on the documents' tags; \`reranker\` reorders (available: ${ctx.search.rerankers.join(', ')}).`,
      inputSchema: searchBody(maxTopK, ctx.search.rerankers),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ query, ...options }) =>
      answer('search_knowledge', async (deadline) => ({
        hits: await ctx.search.forTenant(tenantId).search(query, { ...withEngineWeights(options), signal: deadline }),
      })),
  );

  server.registerTool(
    'ingest_document',
    {
      title: 'Ingest a document',
      description:
        'Add a document (plain text, Markdown or HTML given as `text`) to the searchable knowledge: it is chunked by ' +
        'structure, embedded and indexed. The same text again is `unchanged`; a known `source` with new text replaces that ' +
        'document. Answers `{"status":"created"|"unchanged"|"replaced","document":{...}}`.',
      inputSchema: ingestJsonBody,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ({ text, format, maxTokens, overlapTokens, passageTokens, ...rest }) =>
      answer('ingest_document', (deadline) =>
        ctx.documents.forTenant(tenantId).ingest({ ...rest, content: text, format, chunking: { maxTokens, overlapTokens, passageTokens }, signal: deadline }),
      ),
  );

  server.registerTool(
    'chat',
    {
      title: 'Ask memrag',
      description:
        "Answer a message from the agent's memories and the documents, citing them as [n]: " +
        '`{"answer","citations":[{id,kind,...}],"conversationId","mode"}`. Pass the returned `conversationId` back to ' +
        "continue the conversation. With `userId` it recalls that user's memories and the agent's shared ones; without it, " +
        'the shared memories only, and the memories it saves are shared. Without an LLM configured on the server the ' +
        "answer is extractive (quoted sources). `instructions` add to the agent's for this turn; `sampling` and " +
        "`reasoning {effort}` win over the agent's; `includeReasoning: true` adds the model's reasoning as `reasoning`.",
      // No client tools: an MCP client is the tool host of its own model, not of ours.
      inputSchema: chatBody(maxTopK).omit({ stream: true, tools: true }),
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    // `instructions` add to the agent's, as on /v1/chat: the chat's own `instructions` would replace them.
    ({ agentId, instructions: turnInstructions, ...rest }) =>
      answer(
        'chat',
        async () => {
          const request = { ...rest, agentId: agentId ?? DEFAULT_AGENT_ID, ...(turnInstructions ? { turnInstructions } : {}) };
          const reply = await ctx.chat.forTenant(tenantId).chat({ ...request, stream: false, signal });
          // A run waiting for approval is handed back as it is: it is decided over HTTP (`/v1/runs/{runId}/approvals`).
          if (reply.status !== 'completed') return reply;
          return {
            answer: reply.answer,
            citations: reply.citations,
            conversationId: reply.conversationId,
            runId: reply.runId,
            mode: reply.mode,
            ...(reply.note ? { note: reply.note } : {}),
            ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
          };
        },
        false,
      ),
  );

  registerBlockTools(server, ctx.blocks.forTenant(tenantId), ctx.agents.forTenant(tenantId), (tool, work) => answer(tool, work));
  registerWorkflowTools(server, ctx, tenantId, signal, answer);

  return server;
}
