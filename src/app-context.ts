import type { LlmProvider } from './agent/llm-provider.js';
import type { KnowledgeRetriever } from './chat/knowledge-retriever.js';
import { llmProviderFromConfig } from './chat/llm-from-config.js';
import type { Config } from './config/config.js';
import { type Database, openDatabase } from './db/database.js';
import { ensureVectorSpace } from './db/vector-space.js';
import type { Embedder } from './embeddings/embedder.js';
import { type DocumentStore, createDocumentStore } from './knowledge/document-store.js';
import { type KnowledgeSearch, createKnowledgeSearch, fusionWeightsFor } from './knowledge/knowledge-search.js';
import type { MemoryStore } from './memory/memory-types.js';
import { createPgMemoryStore } from './memory/pg-memory-store.js';

/** The services the HTTP routes use; built once at start and closed once at shutdown. */
export interface AppContext {
  config: Config;
  database: Database;
  embedder: Embedder;
  memories: MemoryStore;
  documents: DocumentStore;
  /** Document retrieval: hybrid, vector and BM25 search over the chunks (`/v1/search`). */
  search: KnowledgeSearch;
  /** The chat's model; undefined when none is configured, and the chat answers extractively. */
  llm?: LlmProvider | undefined;
  /** Document retrieval for the chat: `search`, unless another retriever was given. */
  knowledge?: KnowledgeRetriever | undefined;
  /** Closes the database, then the embedder (which may run worker threads). */
  close(): Promise<void>;
}

export interface AppContextOptions {
  /**
   * Required: building one from the config is the caller's job (`createEmbedder` in main), so
   * tests can pass a small deterministic one. The context owns it once created.
   */
  embedder: Embedder;
  /** Overrides the LLM built from LLM_* config; `null` means none even when configured. */
  llm?: LlmProvider | null;
  knowledge?: KnowledgeRetriever;
}

/**
 * Opens the database (PGlite in DATA_DIR, or the server at DATABASE_URL), binds it to the
 * embedder's vector space and builds the stores. If that fails, the database is closed again
 * and the embedder stays the caller's to close.
 */
export async function createAppContext(config: Config, options: AppContextOptions): Promise<AppContext> {
  const { embedder } = options;
  const database = await openDatabase(config.DATABASE_URL ? { url: config.DATABASE_URL } : { dataDir: config.DATA_DIR });
  try {
    // Before any read or write: a store made by another embedder must be refused, not mixed.
    await ensureVectorSpace(database.db, embedder);
  } catch (err) {
    await database.close().catch(() => {});
    throw err;
  }
  const memories = createPgMemoryStore({ db: database.db, embedder });
  const documents = createDocumentStore({ db: database.db, embedder });
  const calibrated = fusionWeightsFor(embedder.id);
  const search = createKnowledgeSearch({
    db: database.db,
    embedder,
    weights: { ...calibrated, vector: config.FUSION_VECTOR_WEIGHT ?? calibrated.vector, text: config.FUSION_TEXT_WEIGHT ?? calibrated.text },
  });
  const llm = options.llm === undefined ? llmProviderFromConfig(config) : (options.llm ?? undefined);
  const knowledge = options.knowledge ?? search;

  let closing: Promise<void> | undefined;
  const close = () =>
    // Idempotent: a second signal during shutdown must not close the pool twice.
    (closing ??= (async () => {
      try {
        await database.close();
      } finally {
        await embedder.close();
      }
    })());

  return { config, database, embedder, memories, documents, search, llm, knowledge, close };
}
