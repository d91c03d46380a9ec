import { type Database, openDatabase } from '../../src/db/database.js';
import { acquireRealPostgres } from '../support/real-postgres.js';
import { conversationStoreContract } from './conversation-store-contract.js';

/** A fresh database on the real server, dropped when the suite closes it. */
async function openRealDatabase(): Promise<Database | { skipReason: string }> {
  const server = await acquireRealPostgres();
  if ('skipReason' in server) return server;
  const database = await openDatabase({ url: server.url });
  return {
    ...database,
    async close() {
      await database.close();
      await server.release();
    },
  };
}

conversationStoreContract('PostgreSQL server', openRealDatabase);
