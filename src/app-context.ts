import type { Config } from './config/config.js';
import { type Database, openDatabase } from './db/database.js';
import { ensureVectorSpace } from './db/vector-space.js';
import type { Embedder } from './embeddings/embedder.js';
import type { MemoryStore } from './memory/memory-types.js';
import { createPgMemoryStore } from './memory/pg-memory-store.js';

/** The services the HTTP routes use; built once at start and closed once at shutdown. */
export interface AppContext {
  config: Config;
  database: Database;
  embedder: Embedder;
  memories: MemoryStore;
  /** Closes the database, then the embedder (which may run worker threads). */
  close(): Promise<void>;
}

export interface AppContextOptions {
  /**
   * Required: building one from the config is the caller's job (`createEmbedder` in main), so
   * tests can pass a small deterministic one. The context owns it once created.
   */
  embedder: Embedder;
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

  return { config, database, embedder, memories, close };
}
