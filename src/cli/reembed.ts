/**
 * Re-embeds the whole store with the configured embedder (EMBEDDING_* variables), for switching
 * models: `EMBEDDING_PROVIDER=transformers EMBEDDING_MODEL=... npm run reembed`.
 */
import { ConfigError, loadConfig } from '../config/config.js';
import { openDatabase } from '../db/database.js';
import { reembedAll } from '../db/reembed.js';
import { readSpace } from '../db/vector-space.js';
import { createEmbedder } from '../embeddings/create-embedder.js';

async function main() {
  const config = loadConfig();
  const database = await openDatabase({ url: config.DATABASE_URL, dataDir: config.DATA_DIR });
  const embedder = await createEmbedder(config);
  try {
    const before = await readSpace(database.db, 'memories');
    console.log(`re-embedding with ${embedder.id} (${embedder.dimensions} dims); stored: ${before ? `${before.embedderId} (${before.dimensions} dims)` : 'none'}`);
    let lastLogged = 0;
    const summary = await reembedAll(database.db, embedder, {
      batchSize: config.EMBEDDING_BATCH_SIZE,
      onProgress: ({ table, done, total }) => {
        if (done === total || Date.now() - lastLogged > 2000) {
          lastLogged = Date.now();
          console.log(`  ${table}: ${done}/${total}`);
        }
      },
    });
    for (const { table, rows } of summary) console.log(`${table}: ${rows} rows re-embedded`);
  } finally {
    await embedder.close();
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
