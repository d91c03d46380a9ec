import { describeOnDrivers } from '../support/database-drivers.js';
import { documentStoreContract } from './document-store-contract.js';

describeOnDrivers('document store', documentStoreContract);
