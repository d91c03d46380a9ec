import { describeOnDrivers } from '../support/database-drivers.js';
import { filteredSearchAtScale, memoryStoreContract } from './memory-store-contract.js';

describeOnDrivers('memory store', (driver) => {
  memoryStoreContract(driver);
  filteredSearchAtScale(driver);
});
