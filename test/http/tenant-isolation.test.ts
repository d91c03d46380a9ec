import { describeOnDrivers } from '../support/database-drivers.js';
import { tenantIsolationSuite } from './tenant-isolation-suite.js';

describeOnDrivers('tenants', tenantIsolationSuite);
