import { openDatabase } from '../../src/db/database.js';
import { filteredSearchAtScale, memoryStoreContract } from './memory-store-contract.js';

memoryStoreContract('PGlite', () => openDatabase({}));
filteredSearchAtScale('PGlite', () => openDatabase({}));
