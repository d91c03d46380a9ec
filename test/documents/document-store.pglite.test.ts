import { openDatabase } from '../../src/db/database.js';
import { documentStoreContract } from './document-store-contract.js';

documentStoreContract('PGlite', () => openDatabase({}));
