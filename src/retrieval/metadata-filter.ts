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

export interface MetadataFilterIssue {
  path: (string | number)[];
  message: string;
}

export type ParsedMetadataFilter = { ok: true; filter: MetadataFilter } | { ok: false; issues: MetadataFilterIssue[] };

/** Bounds that keep one filter from becoming a query the planner chokes on. */
export const METADATA_FILTER_LIMITS = { maxDepth: 8, maxConditions: 64, maxInValues: 100, keyMaxChars: 256 } as const;

const OPERATORS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists'] as const;
type Operator = (typeof OPERATORS)[number];

class FilterProblem extends Error {
  constructor(
    readonly path: (string | number)[],
    message: string,
  ) {
    super(message);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is MetadataScalar => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/**
 * Parses a Mongo-style filter: an object's entries all hold (an implicit `$and`); a key with a
 * scalar is equality, a key with an object of `$` operators is those operators on the key (all
 * of them); `$and`/`$or` take non-empty arrays of filters. The first problem is reported with its
 * path, as a client would fix them one at a time.
 */
export function parseMetadataFilter(input: unknown): ParsedMetadataFilter {
  let conditions = 0;
  const count = (path: (string | number)[]) => {
    if (++conditions > METADATA_FILTER_LIMITS.maxConditions)
      throw new FilterProblem(path, `a filter may hold at most ${METADATA_FILTER_LIMITS.maxConditions} conditions`);
  };

  const parseObject = (value: unknown, path: (string | number)[], depth: number): MetadataFilter => {
    if (!isObject(value)) throw new FilterProblem(path, 'must be an object of metadata keys and conditions');
    if (depth > METADATA_FILTER_LIMITS.maxDepth) throw new FilterProblem(path, `must not nest deeper than ${METADATA_FILTER_LIMITS.maxDepth} levels`);
    const parts: MetadataFilter[] = [];
    for (const [key, inner] of Object.entries(value)) {
      const at = [...path, key];
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(inner) || inner.length === 0) throw new FilterProblem(at, 'must be a non-empty array of filters');
        const members = inner.map((member, i) => parseObject(member, [...at, i], depth + 1));
        parts.push(key === '$and' ? { and: members } : { or: members });
        continue;
      }
      if (key.startsWith('$')) throw new FilterProblem(at, `unknown operator ${JSON.stringify(key)} (a metadata key comes first: {"key": {"${key}": …}})`);
      if (key === '') throw new FilterProblem(at, 'a metadata key must not be empty');
      if (key.length > METADATA_FILTER_LIMITS.keyMaxChars)
        throw new FilterProblem(at, `a metadata key must be at most ${METADATA_FILTER_LIMITS.keyMaxChars} characters`);
      if (key.includes('\u0000')) throw new FilterProblem(at, 'a metadata key must not contain NUL');
      parts.push(...parseConditions(key, inner, at));
    }
    return parts.length === 1 ? parts[0]! : { and: parts };
  };

  const parseConditions = (key: string, value: unknown, path: (string | number)[]): MetadataFilter[] => {
    if (isScalar(value)) {
      count(path);
      return [{ key, op: 'eq', value: checkedScalar(value, path) }];
    }
    if (Array.isArray(value)) throw new FilterProblem(path, 'an array cannot be matched; use {"$in": [...]} for one of several values');
    if (!isObject(value)) throw new FilterProblem(path, 'must be a value or an object of operators');
    const entries = Object.entries(value);
    if (entries.length === 0) throw new FilterProblem(path, 'must name at least one operator');
    return entries.map(([op, operand]) => {
      const at = [...path, op];
      if (!(OPERATORS as readonly string[]).includes(op)) {
        throw new FilterProblem(
          at,
          op.startsWith('$')
            ? `unknown operator; use one of ${OPERATORS.join(' ')}`
            : 'nested keys are not filtered: only top-level metadata keys, with $ operators',
        );
      }
      count(at);
      return condition(key, op as Operator, operand, at);
    });
  };

  try {
    if (!isObject(input)) return { ok: false, issues: [{ path: [], message: 'must be a JSON object' }] };
    return { ok: true, filter: parseObject(input, [], 1) };
  } catch (err) {
    if (err instanceof FilterProblem) return { ok: false, issues: [{ path: err.path, message: err.message }] };
    throw err;
  }
}

function checkedScalar(value: MetadataScalar, path: (string | number)[]): MetadataScalar {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new FilterProblem(path, 'must be a finite number');
  if (typeof value === 'string' && value.includes('\u0000')) throw new FilterProblem(path, 'must not contain NUL');
  return value;
}

function condition(key: string, op: Operator, operand: unknown, path: (string | number)[]): MetadataFilter {
  switch (op) {
    case '$eq':
    case '$ne':
      if (!isScalar(operand)) throw new FilterProblem(path, 'must be a string, a number, a boolean or null');
      return { key, op: op === '$eq' ? 'eq' : 'ne', value: checkedScalar(operand, path) };
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      // Ordering booleans or null against each other means nothing a client would want.
      if (typeof operand !== 'number' && typeof operand !== 'string') throw new FilterProblem(path, 'must be a number or a string');
      return { key, op: op.slice(1) as MetadataComparison, value: checkedScalar(operand, path) };
    case '$in':
    case '$nin': {
      if (!Array.isArray(operand)) throw new FilterProblem(path, 'must be an array of values');
      if (operand.length > METADATA_FILTER_LIMITS.maxInValues) throw new FilterProblem(path, `must hold at most ${METADATA_FILTER_LIMITS.maxInValues} values`);
      const values = operand.map((v, i) => {
        if (!isScalar(v)) throw new FilterProblem([...path, i], 'must be a string, a number, a boolean or null');
        return checkedScalar(v, [...path, i]);
      });
      return { key, op: op === '$in' ? 'in' : 'nin', values };
    }
    case '$exists':
      if (typeof operand !== 'boolean') throw new FilterProblem(path, 'must be true or false');
      return { key, op: 'exists', exists: operand };
  }
}

/**
 * Whether a metadata object matches, with the same semantics as the SQL: the reference the SQL is
 * tested against, and what code filtering rows it already holds can use.
 */
export function matchesMetadataFilter(filter: MetadataFilter, metadata: Record<string, unknown>): boolean {
  if ('and' in filter) return filter.and.every((f) => matchesMetadataFilter(f, metadata));
  if ('or' in filter) return filter.or.some((f) => matchesMetadataFilter(f, metadata));
  const has = Object.hasOwn(metadata, filter.key);
  const stored = has ? metadata[filter.key] : undefined;
  const equals = (v: MetadataScalar) => has && stored === v;
  switch (filter.op) {
    case 'exists':
      return has === filter.exists;
    case 'eq':
      return equals(filter.value);
    case 'ne':
      return !equals(filter.value);
    case 'in':
      return filter.values.some(equals);
    case 'nin':
      return !filter.values.some(equals);
    default: {
      const v = filter.value;
      if (typeof v !== typeof stored || (typeof v !== 'number' && typeof v !== 'string')) return false;
      const cmp = typeof v === 'number' ? (stored as number) - v : compareBytes(stored as string, v as string);
      return filter.op === 'gt' ? cmp > 0 : filter.op === 'gte' ? cmp >= 0 : filter.op === 'lt' ? cmp < 0 : cmp <= 0;
    }
  }
}

/** Strings ordered by their UTF-8 bytes: PostgreSQL's `COLLATE "C"`, the same on every server. */
function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
