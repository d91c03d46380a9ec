import { describeOnDrivers } from '../support/database-drivers.js';
import { memoryAccountabilityContract } from './memory-accountability-contract.js';
import { memoryLifecycleContract } from './memory-lifecycle-contract.js';
import { memoryStoreContract } from './memory-store-contract.js';

describeOnDrivers('memory store', (driver) => {
  memoryStoreContract(driver);
  memoryLifecycleContract(driver);
  memoryAccountabilityContract(driver);
});
