import { openRealDatabase } from '../support/real-database.js';
import { filteredSearchAtScale, memoryStoreContract } from './memory-store-contract.js';

memoryStoreContract('PostgreSQL server', openRealDatabase);
filteredSearchAtScale('PostgreSQL server', openRealDatabase);
