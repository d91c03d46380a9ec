import { tenantIsolationSuite } from './tenant-isolation-suite.js';

tenantIsolationSuite('PGlite', async () => ({ env: {}, release: async () => {} }));
