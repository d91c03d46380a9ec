import type { Schemas } from '../../client/memrag-client.js';
import { longDate } from './long-date.js';

/** When a fact held in the world (valid time), as a memory carries it; null where open. */
type ValidTime = Pick<Schemas['Memory'], 'validFrom' | 'validUntil'>;

/** `Valid from 1 March 2026 until 9 April 2026`; undefined for a fact with no valid time, true as far as known. */
export function describeValidTime({ validFrom, validUntil }: ValidTime): string | undefined {
  if (validFrom && validUntil) return `Valid from ${longDate(validFrom)} until ${longDate(validUntil)}`;
  if (validFrom) return `Valid from ${longDate(validFrom)}`;
  if (validUntil) return `Valid until ${longDate(validUntil)}`;
  return undefined;
}
