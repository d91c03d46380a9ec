import { describe } from 'vitest';
import type { DatabaseDriver } from '../support/database-drivers.js';
import { memoryStoreCrudCases } from './support/memory-store-crud-cases.js';
import { useMemoryStoreFixture } from './support/memory-store-fixture.js';
import { memoryStoreIndexingCases } from './support/memory-store-indexing-cases.js';
import { memoryStoreTextSearchCases } from './support/memory-store-text-search-cases.js';

export { filteredSearchAtScale } from './memory-store-at-scale-contract.js';

/** The MemoryStore contract, run by describeOnDrivers on an empty, migrated database of its own. */
export function memoryStoreContract(driver: DatabaseDriver) {
  describe('MemoryStore contract', () => {
    const f = useMemoryStoreFixture(driver);
    memoryStoreCrudCases(f);
    memoryStoreTextSearchCases(f);
    memoryStoreIndexingCases(f);
  });
}
