import { customType } from 'drizzle-orm/pg-core';
import { vectorToBinary } from './vector-wire-format.js';

/**
 * A pgvector column declared without a dimension: the dimension belongs to the configured
 * embedder, so it is fixed at start-up by `ensureVectorSpace` rather than by a migration.
 */
export const vectorColumn = customType<{ data: number[]; driverData: Buffer | string }>({
  dataType() {
    return 'vector';
  },
  toDriver(value) {
    return vectorToBinary(value);
  },
  fromDriver(value) {
    return JSON.parse(String(value)) as number[];
  },
});
