import { openRealDatabase } from '../support/real-database.js';
import { documentStoreContract } from './document-store-contract.js';

documentStoreContract('PostgreSQL server', openRealDatabase);
