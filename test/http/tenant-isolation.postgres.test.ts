import { acquireRealPostgres } from '../support/real-postgres.js';
import { tenantIsolationSuite } from './tenant-isolation-suite.js';

tenantIsolationSuite('PostgreSQL server', async () => {
  const server = await acquireRealPostgres();
  if ('skipReason' in server) return server;
  return { env: { DATABASE_URL: server.url }, release: () => server.release() };
});
