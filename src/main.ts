import type { AddressInfo } from 'node:net';
import type { AppContext } from './app-context.js';
import { type Config, ConfigError, loadConfig } from './config/config.js';
import { createPgliteDirectory, pgliteDirectoryToCreate } from './db/pglite-first-start.js';
import { createLogger } from './observability/logger.js';

// After the drain, closing the database and the embedder gets this long before we give up on them.
const CLOSE_GRACE_MS = 5_000;

/**
 * The server's modules, loaded once the first start's database creation is under way: loading
 * them takes seconds of one core (under tsx, their compilation too), which the creation, in a
 * child process, can spend on another.
 */
async function loadServerModules() {
  const [nodeServer, appContext, loopback, embedders, http, errorMapping, shutdown, otel, timeWindow, idle] = await Promise.all([
    import('@hono/node-server'),
    import('./app-context.js'),
    import('./config/loopback-host.js'),
    import('./embeddings/create-embedder.js'),
    import('./http/app.js'),
    import('./api/error-mapping.js'),
    import('./http/graceful-shutdown.js'),
    import('./observability/otel-setup.js'),
    import('./text/time-window.js'),
    import('./util/idle-collection.js'),
  ]);
  return { ...nodeServer, ...appContext, ...loopback, ...embedders, ...http, ...errorMapping, ...shutdown, ...otel, ...timeWindow, ...idle };
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config.LOG_LEVEL);
  const newDataDir = pgliteDirectoryToCreate(config);
  let created: Promise<void> | undefined;
  if (newDataDir) {
    logger.info(
      { dataDir: newDataDir },
      `first start: creating the embedded database in ${newDataDir} (PostgreSQL's initdb in WebAssembly, then the schema's migrations); ` +
        'this takes several times as long as a restart, which skips it',
    );
    const started = performance.now();
    created = createPgliteDirectory(newDataDir).then(() =>
      logger.info({ dataDir: newDataDir, durationMs: Math.round(performance.now() - started) }, 'first start: embedded database created'),
    );
    // Awaited below; a failure must not surface first as an unhandled rejection while modules load.
    created.catch(() => {});
  }
  const {
    serve,
    createAppContext,
    isLoopbackHost,
    configuredEmbedder,
    createApp,
    describeError,
    drainServer,
    startTracing,
    prepareTimeWindowReader,
    idleCollectionLog,
    startIdleCollection,
  } = await loadServerModules();
  await created;
  // Before anything that makes spans; nothing is loaded without an OTLP endpoint.
  const tracing = await startTracing(config, logger);
  const embedder = await configuredEmbedder(config);
  let ctx: AppContext;
  try {
    ctx = await createAppContext(config, { embedder, logger, describeError });
  } catch (err) {
    // The context owns the embedder only once it exists; its worker threads would keep us alive.
    if (typeof embedder !== 'function') await embedder.close().catch(() => {});
    throw err;
  }
  // Without keys every /v1 request is served as tenant `default`: anyone who can connect gets
  // everything. Refused rather than quietly bound to loopback: an operator who set HOST wants the
  // server reachable, and a server that is up but unreachable is harder to diagnose than this.
  if (!ctx.auth.required && !isLoopbackHost(config.HOST)) {
    await ctx.close().catch(() => {});
    throw new Error(
      `Refusing to listen on HOST=${config.HOST} without API keys: /v1 and /mcp would be open to anyone who can reach it. ` +
        'Set API_KEYS (tenant:key entries), or create a key with `npm run keys -- create --tenant <tenant>`, ' +
        'or set HOST=127.0.0.1 to serve this machine only.',
    );
  }

  // Every search reads its query's time expression: the first ones would pay the date parser's setup.
  prepareTimeWindowReader();
  // What a burst of requests left on the heap goes back to the system once the server is idle.
  const idleCollection = startIdleCollection({ onCollected: (c) => logger.debug(idleCollectionLog(c), 'heap collected after work') });
  if (!idleCollection.running) logger.warn('no garbage collector exposed by this runtime: the heap a burst of work grows stays resident');
  const app = createApp(ctx);
  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info: AddressInfo) => {
    const url = urlOf(config.HOST, info.port);
    logger.info({ url, port: info.port, database: ctx.database.driver, embedder: ctx.embedder.id, apiKeys: ctx.auth.required }, `memrag listening on ${url}`);
    if (!ctx.auth.required) {
      logger.warn(
        { host: config.HOST },
        `no API keys exist: /v1 (and /mcp) is open, so memrag listens on loopback (${config.HOST}) only; keys created now turn authentication on`,
      );
    }
    // Without a model the chat still answers, extractively; say so, or operators wonder why answers look odd.
    if (ctx.llm) logger.info({ model: ctx.llm.model, baseUrl: config.LLM_BASE_URL ?? 'OpenAI' }, `chat LLM: ${ctx.llm.model}`);
    else logger.info('chat LLM: none configured; /v1/chat answers extractively');
  });

  // EADDRINUSE and the like arrive as an event; unhandled, it would crash with a stack trace.
  server.on('error', (err: Error) => {
    logger.fatal(`Cannot listen on ${config.HOST}:${config.PORT}: ${err.message}`);
    void ctx.close().finally(() => process.exit(1));
  });

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second Ctrl-C means "now".
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    stopping = true;
    idleCollection.stop();
    const timeoutMs = config.SHUTDOWN_TIMEOUT_MS;
    logger.info({ signal, timeoutMs }, 'shutting down: refusing new connections, finishing requests in flight');
    setTimeout(() => {
      logger.error(`Closing the database and embedder took longer than ${CLOSE_GRACE_MS} ms after the drain; exiting`);
      process.exit(1);
    }, timeoutMs + CLOSE_GRACE_MS).unref();
    const started = performance.now();
    // The server first, so no request reaches a closed database.
    void drainServer(server, timeoutMs)
      .then(({ drained }) => {
        if (!drained) logger.warn({ timeoutMs }, 'requests still running at the shutdown deadline were cut off');
        return ctx.close();
      })
      // Last, so that the spans of the requests drained and of the closing are exported too.
      .then(() => tracing.shutdown())
      .then(
        () => {
          logger.info({ durationMs: Math.round(performance.now() - started) }, 'shut down');
          process.exit(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'error while closing');
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

function urlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// Start-up failures (a vector space mismatch, an unreachable database) are for the operator:
// the message says what to do, a stack trace would only bury it.
main().catch((err: unknown) => {
  console.error(messageOf(err));
  process.exit(1);
});
