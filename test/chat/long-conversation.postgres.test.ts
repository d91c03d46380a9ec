import type { AppContext } from '../../src/app-context.js';
import { createTestContext } from '../http/http-test-context.js';
import { acquireRealPostgres } from '../support/real-postgres.js';
import { LONG_CONVERSATION_ENV, longConversationSuite } from './long-conversation-suite.js';

async function openOnRealPostgres(): Promise<AppContext | { skipReason: string }> {
  const server = await acquireRealPostgres();
  if ('skipReason' in server) return server;
  const ctx = await createTestContext({ ...LONG_CONVERSATION_ENV, DATABASE_URL: server.url });
  return {
    ...ctx,
    async close() {
      await ctx.close();
      await server.release();
    },
  };
}

longConversationSuite('PostgreSQL server', openOnRealPostgres);
