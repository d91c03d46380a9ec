import { describeOnDrivers } from '../support/database-drivers.js';
import { userErasureContract } from './user-erasure-contract.js';

describeOnDrivers('user erasure', userErasureContract);
