import { describeOnDrivers } from '../support/database-drivers.js';
import { filteredSearchAtScale } from './memory-store-contract.js';

// Apart from the contract: building 20k memories takes most of a minute, which the quick run skips.
describeOnDrivers('memory store at scale', (driver) => {
  filteredSearchAtScale(driver);
});
