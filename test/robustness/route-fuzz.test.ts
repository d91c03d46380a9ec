import { type DriverName, describeOnDrivers } from '../support/database-drivers.js';
import { prepareFuzzTarget, routeFuzzSuite } from './route-fuzz-suite.js';

// A shorter run on the server than on PGlite: the same routes, checked for what the pg driver does
// differently (parameter and array serialisation, connection handling). The limits bound every
// route's runs short of FUZZ_RUNS on two cores, and keep the whole suite (about 120 s for both
// drivers, of a full run's 30 minutes) inside the CI budget. FUZZ_MS widens a run.
const MS_PER_ROUTE: Record<DriverName, number> = { PGlite: 500, 'PostgreSQL server': 250 };

describeOnDrivers('route fuzz', async (driver) => {
  const database = await driver.provision();
  routeFuzzSuite(await prepareFuzzTarget(database.env, database.release), MS_PER_ROUTE[driver.name]);
});
