/**
 * Re-embeds the whole store with the configured embedder (EMBEDDING_* variables), for switching
 * models: `EMBEDDING_PROVIDER=transformers EMBEDDING_MODEL=... npm run reembed`.
 */
import { ConfigError, loadConfig } from '../config/config.js';
import { openDatabase } from '../db/database.js';
import { runReembedJob } from '../jobs/maintenance-jobs.js';
import { createLogger } from '../observability/logger.js';
import { readSpace } from '../db/vector-space.js';
import { createEmbedder } from '../embeddings/create-embedder.js';

async function main() {
  const config = loadConfig();
  const database = await openDatabase({ url: config.DATABASE_URL, dataDir: config.DATA_DIR });
  const embedder = await createEmbedder(config);
  try {
    const before = await readSpace(database.db, 'memories');
    console.log(
      `re-embedding with ${embedder.id} (${embedder.dimensions} dims); stored: ${before ? `${before.embedderId} (${before.dimensions} dims)` : 'none'}`,
    );
    let lastLogged = 0;
    // As a job (kind `reembed`, its progress in the jobs table), worked on here, with the new model.
    const job = await runReembedJob({
      db: database.db,
      embedder,
      batchSize: config.EMBEDDING_BATCH_SIZE,
      logger: createLogger(config.LOG_LEVEL),
      onProgress: ({ stage, done, total }) => {
        if (done === total || Date.now() - lastLogged > 2000) {
          lastLogged = Date.now();
          console.log(`  ${stage}: ${done}/${total}`);
        }
      },
    });
    if (job.status !== 'succeeded') {
      console.error(`re-embedding job ${job.id} ${job.status}: ${job.error?.message ?? ''}`);
      process.exitCode = 1;
      return;
    }
    for (const { table, rows } of (job.result?.tables ?? []) as { table: string; rows: number }[]) console.log(`${table}: ${rows} rows re-embedded`);
  } finally {
    await embedder.close();
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});
