import { customType } from 'drizzle-orm/pg-core';

/**
 * A pgvector column declared without a dimension: the dimension belongs to the configured
 * embedder, so it is fixed at start-up by `ensureVectorSpace` rather than by a migration.
 */
export const vectorColumn = customType<{ data: number[]; driverData: string }>({
  dataType() {
    return 'vector';
  },
  toDriver(value) {
    return `[${value.join(',')}]`;
  },
  fromDriver(value) {
    return JSON.parse(value) as number[];
  },
});
