import { describe } from 'vitest';
import type { DatabaseDriver } from '../support/database-drivers.js';
import { useTurnCorpusFixture } from './support/turn-corpus-fixture.js';
import { turnCorpusIndexingCases } from './support/turn-corpus-indexing-cases.js';
import { turnCorpusSearchCases } from './support/turn-corpus-search-cases.js';
import { turnCorpusUpkeepCases } from './support/turn-corpus-upkeep-cases.js';

/** The turns corpus (episodic recall): indexing, neighbours, search, deletion, isolation. Run by describeOnDrivers. */
export function turnCorpusContract(driver: DatabaseDriver) {
  describe('turns corpus', () => {
    const f = useTurnCorpusFixture(driver);
    turnCorpusIndexingCases(f);
    turnCorpusSearchCases(f);
    turnCorpusUpkeepCases(f);
  });
}
