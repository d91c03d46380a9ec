import { describeOnDrivers } from '../support/database-drivers.js';
import { conversationStoreContract } from './conversation-store-contract.js';

describeOnDrivers('conversation store', conversationStoreContract);
