import { describe } from 'vitest';
import type { DatabaseDriver } from '../support/database-drivers.js';
import { documentIngestCases } from './support/document-ingest-cases.js';
import { documentSearchCases } from './support/document-search-cases.js';
import { useDocumentStoreFixture } from './support/document-store-fixture.js';
import { documentWriteIntegrityCases } from './support/document-write-integrity-cases.js';

/**
 * The document store and knowledge search, run by describeOnDrivers on an empty, migrated database
 * of its own.
 */
export function documentStoreContract(driver: DatabaseDriver) {
  describe('DocumentStore and DocumentSearch', () => {
    const f = useDocumentStoreFixture(driver);
    documentIngestCases(f);
    documentWriteIntegrityCases(f);
    documentSearchCases(f);
  });
}
