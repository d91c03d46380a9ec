import { describeOnDrivers } from '../support/database-drivers.js';
import { concurrentWritesSuite } from './concurrent-writes-suite.js';

describeOnDrivers('races', concurrentWritesSuite);
