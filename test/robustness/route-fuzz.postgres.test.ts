import { acquireRealPostgres } from '../support/real-postgres.js';
import { prepareFuzzTarget, routeFuzzSuite } from './route-fuzz-suite.js';

// A shorter run than PGlite's: the same routes, checked for what the pg driver does differently
// (parameter and array serialisation, connection handling).
const server = await acquireRealPostgres();
routeFuzzSuite(
  'PostgreSQL server',
  'skipReason' in server ? server : await prepareFuzzTarget({ DATABASE_URL: server.url }, () => server.release()),
  1_200,
);
