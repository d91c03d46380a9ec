import { prepareFuzzTarget, routeFuzzSuite } from './route-fuzz-suite.js';

routeFuzzSuite('PGlite', await prepareFuzzTarget({ DATA_DIR: 'memory://' }), 2_500);
