import { type DriverName, describeOnDrivers } from '../support/database-drivers.js';
import { prepareFuzzTarget, routeFuzzSuite } from './route-fuzz-suite.js';

// A shorter run on the server than on PGlite: the same routes, checked for what the pg driver does
// differently (parameter and array serialisation, connection handling). The limits bound every
// route's runs short of FUZZ_RUNS on two cores, and keep the whole suite (about 85 s for both
// drivers) inside the CI budget: the full run took 30 min 17 s on a slow two-core machine with
// 500 and 250 ms. FUZZ_MS widens a run.
const MS_PER_ROUTE: Record<DriverName, number> = { PGlite: 350, 'PostgreSQL server': 175 };

describeOnDrivers('route fuzz', async (driver) => {
  const database = await driver.provision();
  routeFuzzSuite(await prepareFuzzTarget(database.env, database.release), MS_PER_ROUTE[driver.name]);
});
