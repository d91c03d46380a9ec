import { openDatabase } from '../../src/db/database.js';
import { conversationStoreContract } from './conversation-store-contract.js';

conversationStoreContract('PGlite', () => openDatabase({}));
