import { acquireRealPostgres } from '../support/real-postgres.js';
import { concurrentWritesSuite } from './concurrent-writes-suite.js';

concurrentWritesSuite('PostgreSQL server', async () => {
  const server = await acquireRealPostgres();
  if ('skipReason' in server) return server;
  return { env: { DATABASE_URL: server.url }, release: () => server.release() };
});
