import { openRealDatabase } from '../support/real-database.js';
import { conversationStoreContract } from './conversation-store-contract.js';

conversationStoreContract('PostgreSQL server', openRealDatabase);
