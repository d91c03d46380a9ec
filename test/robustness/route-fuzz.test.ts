import { type DriverName, describeOnDrivers } from '../support/database-drivers.js';
import { prepareFuzzTarget, routeFuzzSuite } from './route-fuzz-suite.js';

// A shorter run on the server than on PGlite: the same routes, checked for what the pg driver does
// differently (parameter and array serialisation, connection handling). Fast routes reach
// FUZZ_RUNS well within these; the limits bound the slow ones (chat, ingestion), and keep the whole
// suite (about 200 s for both drivers) inside the CI budget. FUZZ_MS widens a run.
const MS_PER_ROUTE: Record<DriverName, number> = { PGlite: 1_200, 'PostgreSQL server': 600 };

describeOnDrivers('route fuzz', async (driver) => {
  const database = await driver.provision();
  routeFuzzSuite(await prepareFuzzTarget(database.env, database.release), MS_PER_ROUTE[driver.name]);
});
