/** A JSON value a metadata condition compares with. */
export type MetadataScalar = string | number | boolean | null;

export type MetadataComparison = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte';

/**
 * A filter on top-level metadata keys, parsed from the client's Mongo-style JSON
 * (`{"project":"apollo","priority":{"$gte":2}}`) and not yet SQL: metadata-filter-sql.ts builds
 * that. An empty `and` matches everything; an empty `or` nothing.
 */
export type MetadataFilter =
  | { and: MetadataFilter[] }
  | { or: MetadataFilter[] }
  | { key: string; op: MetadataComparison; value: MetadataScalar }
  | { key: string; op: 'in' | 'nin'; values: MetadataScalar[] }
  | { key: string; op: 'exists'; exists: boolean };
