import { createAppContext } from './app-context.js';
import { type Config, ConfigError, loadConfig } from './config/config.js';
import { configuredEmbedder } from './embeddings/create-embedder.js';
import { createLogger } from './observability/logger.js';
import { startTracing } from './observability/otel-setup.js';
import { idleCollectionLog, startIdleCollection } from './util/idle-collection.js';

/**
 * `npm run worker`: job consumers only, no HTTP. Several run against one PostgreSQL server
 * (DATABASE_URL) and share its queue; on embedded PGlite only one process may open DATA_DIR, so
 * there the API server's in-process workers are the workers.
 */
async function main(): Promise<void> {
  let config: Config;
  try {
    // A worker works, whatever the API servers' WORKERS_IN_PROCESS says.
    config = loadConfig({ ...process.env, WORKERS_IN_PROCESS: 'true' });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger(config.LOG_LEVEL);
  // Before anything that makes spans (each job attempt is one); nothing is loaded without an OTLP endpoint.
  const tracing = await startTracing(config, logger);
  const embedder = await configuredEmbedder(config);
  const ctx = await createAppContext(config, { embedder, logger }).catch(async (err: unknown) => {
    if (typeof embedder !== 'function') await embedder.close().catch(() => {});
    throw err;
  });
  logger.info({ workerId: ctx.jobQueue.runner?.workerId, concurrency: config.JOB_CONCURRENCY, database: ctx.database.driver }, 'memrag worker consuming jobs');
  // What a burst of jobs left on the heap goes back to the system once the loop is quiet.
  const idleCollection = startIdleCollection({ onCollected: (c) => logger.debug(idleCollectionLog(c), 'heap collected after work') });
  if (!idleCollection.running) logger.warn('no garbage collector exposed by this runtime: the heap a burst of work grows stays resident');
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    idleCollection.stop();
    logger.info({ signal }, 'worker stopping: jobs in progress go back to the queue');
    setTimeout(() => process.exit(1), config.SHUTDOWN_TIMEOUT_MS).unref();
    void ctx
      .close()
      // Last, so that the spans of the jobs stopped are exported too.
      .then(() => tracing.shutdown())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'error while closing');
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
