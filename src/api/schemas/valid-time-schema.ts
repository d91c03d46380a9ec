import { z } from 'zod';

/** An instant as ISO 8601 with an offset, in a body or a query string. */
const instant = (description: string) =>
  z.iso
    .datetime({ offset: true })
    .transform((text) => new Date(text))
    .meta({ type: 'string', format: 'date-time', description });

/** Valid time: when a memory's fact held in the world, as a client sets it. */
export const validTimeFields = {
  validFrom: instant('Valid time: when the fact began to hold (ISO 8601); absent or null: always, as far as known.').nullable().optional(),
  validUntil: instant('Valid time: when the fact stopped holding (ISO 8601), after `validFrom`; absent or null: it still does.').nullable().optional(),
};

/** `validUntil` must come after `validFrom` when a body gives both. */
export function validTimeInOrder(body: { validFrom?: Date | null; validUntil?: Date | null }, ctx: z.RefinementCtx): void {
  if (body.validFrom && body.validUntil && body.validUntil.getTime() <= body.validFrom.getTime()) {
    ctx.addIssue({ code: 'custom', path: ['validUntil'], message: 'must be after validFrom' });
  }
}

const AS_OF = 'Record time (ISO 8601): the memories as memrag knew them at this moment, from their history; default now.';
const VALID_AT = 'Valid time (ISO 8601): only facts that held at this moment; default now.';

/** Valid time of a search body. */
export const validAtSchema = instant(VALID_AT);

/**
 * Reads of memories at a moment, in a query string: record time and valid time. Kept as text
 * here (a query's schema is documented as it parses, and a Date has no JSON Schema); `readMoment`
 * makes them instants.
 */
export const readMomentQueryFields = {
  asOf: z.iso.datetime({ offset: true }).optional().meta({ description: AS_OF }),
  validAt: z.iso.datetime({ offset: true }).optional().meta({ description: VALID_AT }),
};

export function readMoment<T extends { asOf?: string; validAt?: string }>(query: T): Omit<T, 'asOf' | 'validAt'> & { asOf?: Date; validAt?: Date } {
  const { asOf, validAt, ...rest } = query;
  return { ...rest, ...(asOf ? { asOf: new Date(asOf) } : {}), ...(validAt ? { validAt: new Date(validAt) } : {}) };
}
