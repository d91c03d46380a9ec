import { describeOnDrivers } from '../support/database-drivers.js';
import { turnCorpusContract } from './turn-corpus-contract.js';

describeOnDrivers('turns corpus', turnCorpusContract);
