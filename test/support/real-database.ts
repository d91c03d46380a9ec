import { type Database, openDatabase } from '../../src/db/database.js';
import { acquireRealPostgres } from './real-postgres.js';

/** A fresh database on the real server (see `acquireRealPostgres`), dropped when it is closed. */
export async function openRealDatabase(): Promise<Database | { skipReason: string }> {
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
