import { type DriverName, describeOnDrivers } from '../support/database-drivers.js';
import { prepareFuzzTarget, routeFuzzSuite } from './route-fuzz-suite.js';

// A shorter run on the server than on PGlite: the same routes, checked for what the pg driver does
// differently (parameter and array serialisation, connection handling).
const MS_PER_ROUTE: Record<DriverName, number> = { PGlite: 2_000, 'PostgreSQL server': 1_000 };

describeOnDrivers('route fuzz', async (driver) => {
  const database = await driver.provision();
  routeFuzzSuite(await prepareFuzzTarget(database.env, database.release), MS_PER_ROUTE[driver.name]);
});
