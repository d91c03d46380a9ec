import { openDatabase, type Database } from '../../src/db/database.js';
import { acquireRealPostgres } from '../support/real-postgres.js';
import { filteredSearchAtScale, memoryStoreContract } from './memory-store-contract.js';

/** A fresh database on the real server for each suite, dropped when the suite closes it. */
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

memoryStoreContract('PostgreSQL server', openRealDatabase);
filteredSearchAtScale('PostgreSQL server', openRealDatabase);
