import { describeOnDrivers } from '../support/database-drivers.js';
import { memoryFieldContract } from './memory-field-contract.js';

describeOnDrivers('memory fields', memoryFieldContract);
