import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type AppContext, createAppContext } from './app-context.js';
import { type Config, ConfigError, loadConfig } from './config/config.js';
import { createEmbedder } from './embeddings/create-embedder.js';
import { createApp } from './http/app.js';

// Requests still running when this expires are cut off rather than holding the shutdown forever.
const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const embedder = await createEmbedder(config);
  let ctx: AppContext;
  try {
    ctx = await createAppContext(config, { embedder });
  } catch (err) {
    // The context owns the embedder only once it exists; its worker threads would keep us alive.
    await embedder.close().catch(() => {});
    throw err;
  }

  const app = createApp(ctx);
  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info: AddressInfo) => {
    if (logsInfo(config)) {
      console.log(`memrag listening on ${urlOf(config.HOST, info.port)} (database: ${ctx.database.driver}, embedder: ${embedder.id})`);
      // Without a model the chat still answers, extractively; say so, or operators wonder why answers look odd.
      console.log(ctx.llm ? `chat LLM: ${ctx.llm.model} (${config.LLM_BASE_URL ?? 'OpenAI'})` : 'chat LLM: none configured; /v1/chat answers extractively');
    }
  });

  // EADDRINUSE and the like arrive as an event; unhandled, it would crash with a stack trace.
  server.on('error', (err: Error) => {
    console.error(`Cannot listen on ${config.HOST}:${config.PORT}: ${err.message}`);
    void ctx.close().finally(() => process.exit(1));
  });

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second Ctrl-C means "now".
      process.exit(1);
    }
    stopping = true;
    if (logsInfo(config)) console.log(`${signal} received, shutting down`);
    setTimeout(() => {
      console.error(`Shutdown took longer than ${SHUTDOWN_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    // The server first, so no request reaches a closed database.
    server.close(() => {
      ctx.close().then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(`Error while closing: ${messageOf(err)}`);
          process.exit(1);
        },
      );
    });
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

function logsInfo(config: Config): boolean {
  return config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'info';
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
