import type { AgentStore } from './agents/agent-store.js';
import type { AuditLog } from './audit/audit-types.js';
import type { ApiKeyAuthenticator } from './auth/api-key-authenticator.js';
import type { BackgroundTasks } from './background/background-tasks.js';
import type { BlockStore } from './blocks/block-types.js';
import type { ChatEvent, ChatService } from './chat/chat-service.js';
import type { Config } from './config/config.js';
import type { AttachmentStore } from './conversations/attachment-store.js';
import type { ConversationStore } from './conversations/conversation-types.js';
import type { TurnIndex } from './conversations/turn-index.js';
import type { TurnSearch } from './conversations/turn-search.js';
import type { Database } from './db/database.js';
import type { TenantDocumentSearch } from './documents/document-search.js';
import type { DocumentStore } from './documents/document-store.js';
import type { Embedder } from './embeddings/embedder.js';
import type { EmbedderForStore } from './embeddings/store-default-provider.js';
import type { JobQueue } from './jobs/job-queue.js';
import type { JobStore } from './jobs/job-store.js';
import type { LlmProvider } from './llm/llm-provider.js';
import type { MemoryExtractor } from './memory/extraction/memory-extractor.js';
import type { MemoryStore } from './memory/memory-types.js';
import type { Logger } from './observability/logger.js';
import type { KnowledgeRetriever } from './retrieval/knowledge.js';
import type { Reranker } from './retrieval/rerank/reranker.js';
import type { LiveRuns } from './runs/live-runs.js';
import type { DescribeError } from './runs/run-service.js';
import type { RunStore } from './runs/run-types.js';
import type { TenantScoped } from './tenancy/tenant-scoped.js';
import type { UserErasure } from './users/user-erasure.js';

// The composition root's types, apart from its wiring (app-context.ts) so that the files wiring
// one part of it (app-context-chat.ts) can name them without importing the root back.

/** The services the HTTP routes use; built once at start and closed once at shutdown. */
export interface AppContext {
  config: Config;
  /** Structured JSON logs; lines written while serving a request carry its id. */
  logger: Logger;
  database: Database;
  /** The model behind what spares it work (vectors shared and remembered); `closed` once closed, for /readyz. */
  embedder: Embedder & { readonly closed: boolean };
  /** API keys (API_KEYS and the `api_keys` table) and their tenants; see src/auth. */
  auth: ApiKeyAuthenticator;
  /**
   * The stores are reached through a tenant only (`ctx.memories.forTenant(id)`): a route cannot
   * read or write without naming the tenant of its API key.
   */
  memories: TenantScoped<MemoryStore>;
  documents: TenantScoped<DocumentStore>;
  /** Agents: the versioned settings a chat runs with for an `agentId` (`/v1/agents`). */
  agents: TenantScoped<AgentStore>;
  /** Document retrieval: hybrid, vector and BM25 search over a tenant's chunks (`/v1/search`). */
  search: TenantDocumentSearch;
  /** The chat's model; undefined when none is configured, and the chat answers extractively. */
  llm?: LlmProvider;
  /** Document retrieval for the chat: `search`, unless another retriever was given. */
  knowledge?: TenantScoped<KnowledgeRetriever>;
  /** Stored chat conversations, their checkpoints and summaries. */
  conversations: TenantScoped<ConversationStore>;
  /** The images of chat messages, stored once per tenant by hash and kept by the conversations that carry them. */
  attachments: TenantScoped<AttachmentStore>;
  /** Past turns of conversations (episodic recall): search (`/v1/turns/search`, the chat's recall)... */
  turns: TenantScoped<TurnSearch>;
  /** ...and indexing (the chat's turn-index hook, conversation imports). */
  turnIndexes: TenantScoped<TurnIndex>;
  /** The chat (`/v1/chat`) and the views of its stored conversations, over the stores above. */
  chat: TenantScoped<ChatService>;
  /** Chat runs: their status, and the state a paused one resumes from. */
  runs: TenantScoped<RunStore>;
  /** Runs in progress in this process: cancelled, and listened to again after a disconnect, through here. */
  liveRuns: LiveRuns<ChatEvent>;
  /** Fact extraction into memories (`/v1/memories/extract`); undefined without an LLM. */
  extractors?: TenantScoped<MemoryExtractor>;
  /** Work done after a reply (the chat's after-turn hooks); drained before the database closes. */
  backgroundTasks: BackgroundTasks;
  /** The `cross-encoder` reranker (RERANKER_MODEL); undefined when none is configured. */
  crossEncoder?: ClosableReranker;
  /** Durable jobs (`/v1/jobs`): asynchronous and batch ingestion, fact extraction; worked on by this process unless WORKERS_IN_PROCESS=false. */
  jobs: TenantScoped<JobStore>;
  /** The queue and this process's workers (`npm run worker` has only these). */
  jobQueue: JobQueue;
  /** What must stay answerable for (user erasures): who did it, to which user, and counts (`/v1/audit`). */
  audit: TenantScoped<AuditLog>;
  /** Erasing a user's data across agents (`DELETE /v1/users/:userId`), recorded in `audit`. */
  userErasure: TenantScoped<UserErasure>;
  /** Working memory (`/v1/blocks`): labelled blocks in every turn's prompt, kept by the model's tools (screened by the firewall). */
  blocks: TenantScoped<BlockStore>;
  /** Closes the database, then the embedder and the cross-encoder (which may run worker threads). */
  close(): Promise<void>;
}

/** A reranker holding a model, and maybe worker threads, until closed. */
export type ClosableReranker = Reranker & { close(): Promise<void> };

export interface AppContextOptions {
  /**
   * Required: building one from the config is the caller's job (`createEmbedder` in main), so
   * tests can pass a small deterministic one. The context owns it once created. Or a function that
   * makes it once the store's recorded vector space is known (main, with EMBEDDING_PROVIDER
   * unset): the context then owns what it returns from the start.
   */
  embedder: Embedder | EmbedderForStore;
  /** Overrides the LLM built from LLM_* config; `null` means none even when configured. */
  llm?: LlmProvider | null;
  knowledge?: TenantScoped<KnowledgeRetriever>;
  /**
   * Overrides the cross-encoder built from RERANKER_* config; `null` means none even when
   * configured. The context owns it once created.
   */
  crossEncoder?: ClosableReranker | null;
  /** Default: JSON lines on stdout at LOG_LEVEL. Tests pass one writing where they can read it. */
  logger?: Logger;
  /**
   * What a failed run records of its error, as the client would be told it: the HTTP edge's error
   * body (main passes it), so that internals stay out. Default: `turn_failed`, no details.
   */
  describeError?: DescribeError;
}
