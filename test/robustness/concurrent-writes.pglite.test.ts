import { concurrentWritesSuite } from './concurrent-writes-suite.js';

concurrentWritesSuite('PGlite', async () => ({ env: { DATA_DIR: 'memory://' }, release: async () => {} }));
