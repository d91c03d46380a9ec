import type { Memory, MemoryScope, MemoryStore, ReadMoment } from '../memory/memory-types.js';
import { type HttpError, notFound } from './errors.js';

/** The scope a key was looked for in, as an error message names it. */
export function describeScope(scope: MemoryScope): string {
  return `${scope.agentId ? ` for agent ${JSON.stringify(scope.agentId)}` : ''}${scope.userId ? ` and user ${JSON.stringify(scope.userId)}` : ''}`;
}

export function memoryNotFound(key: string, scope: MemoryScope): HttpError {
  return notFound(`No memory with key ${JSON.stringify(key)}${describeScope(scope)}`);
}

export function memoryNotValidAt(key: string, scope: MemoryScope, validAt: Date, held: Pick<Memory, 'validFrom' | 'validUntil'>): HttpError {
  const whose = [scope.agentId && `agent ${JSON.stringify(scope.agentId)}`, scope.userId && `user ${JSON.stringify(scope.userId)}`]
    .filter(Boolean)
    .join(' and ');
  const span = [held.validFrom && `from ${held.validFrom.toISOString()}`, held.validUntil && `until ${held.validUntil.toISOString()}`]
    .filter(Boolean)
    .join(' ');
  return notFound(
    `Memory ${JSON.stringify(key)}${whose ? ` of ${whose}` : ''} exists but is not valid at validAt=${validAt.toISOString()} ` +
      `(it holds ${span}); pass validAt to read it`,
  );
}

/**
 * The error for a key `get` found nothing under at `moment`. A fact saved with a valid time that
 * has passed is still there: a bare "no memory" would send the caller looking elsewhere, so the
 * key is read again at any valid time to tell the two apart.
 */
export async function missingMemoryError(memories: Pick<MemoryStore, 'get'>, key: string, scope: MemoryScope, moment: ReadMoment): Promise<HttpError> {
  const held = await memories.get(key, scope, { ...(moment.asOf ? { asOf: moment.asOf } : {}), validAt: null });
  return held ? memoryNotValidAt(key, scope, moment.validAt ?? new Date(), held) : memoryNotFound(key, scope);
}
