import { describe, expect, it } from 'vitest';
import { matchesMetadataFilter, parseMetadataFilter } from '../../src/retrieval/metadata-filter.js';

const ok = (input: unknown) => {
  const parsed = parseMetadataFilter(input);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.filter;
};
const issueOf = (input: unknown) => {
  const parsed = parseMetadataFilter(input);
  if (parsed.ok) throw new Error(`accepted ${JSON.stringify(input)}`);
  return parsed.issues[0]!;
};

describe('parseMetadataFilter', () => {
  it('reads values as equality, operator objects as their conditions, and entries as an implicit $and', () => {
    expect(ok({ project: 'apollo' })).toEqual({ key: 'project', op: 'eq', value: 'apollo' });
    expect(ok({ project: 'apollo', priority: { $gte: 2, $lt: 5 } })).toEqual({
      and: [
        { key: 'project', op: 'eq', value: 'apollo' },
        { key: 'priority', op: 'gte', value: 2 },
        { key: 'priority', op: 'lt', value: 5 },
      ],
    });
    expect(ok({ $or: [{ a: null }, { b: { $in: [1, 'x', true] } }, { c: { $exists: false } }] })).toEqual({
      or: [
        { key: 'a', op: 'eq', value: null },
        { key: 'b', op: 'in', values: [1, 'x', true] },
        { key: 'c', op: 'exists', exists: false },
      ],
    });
    expect(ok({ 'a.b': { $ne: 1 }, d: { $nin: [] } })).toEqual({
      and: [
        { key: 'a.b', op: 'ne', value: 1 },
        { key: 'd', op: 'nin', values: [] },
      ],
    });
  });

  it('names the path of an unknown operator, a wrong type, or a malformed combination', () => {
    expect(issueOf({ priority: { $near: 2 } }).path).toEqual(['priority', '$near']);
    expect(issueOf({ priority: { $gt: true } })).toMatchObject({ path: ['priority', '$gt'], message: 'must be a number or a string' });
    expect(issueOf({ priority: { $in: 3 } }).path).toEqual(['priority', '$in']);
    expect(issueOf({ priority: { $in: [1, { x: 1 }] } }).path).toEqual(['priority', '$in', 1]);
    expect(issueOf({ priority: { $exists: 'yes' } }).path).toEqual(['priority', '$exists']);
    expect(issueOf({ tags: ['a'] }).path).toEqual(['tags']);
    expect(issueOf({ meta: { nested: 1 } }).path).toEqual(['meta', 'nested']);
    expect(issueOf({ meta: {} }).path).toEqual(['meta']);
    expect(issueOf({ $or: [] }).path).toEqual(['$or']);
    expect(issueOf({ $and: [{ a: 1 }, 'x'] }).path).toEqual(['$and', 1]);
    expect(issueOf({ $where: 'x' }).path).toEqual(['$where']);
    expect(issueOf({ '': 1 }).path).toEqual(['']);
    expect(issueOf([1]).path).toEqual([]);
  });

  it('bounds nesting and the number of conditions', () => {
    let deep: unknown = { a: 1 };
    for (let i = 0; i < 10; i++) deep = { $and: [deep] };
    expect(issueOf(deep).message).toMatch(/deeper/);
    const wide = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]));
    expect(issueOf(wide).message).toMatch(/at most 64 conditions/);
    expect(issueOf({ a: { $in: Array.from({ length: 101 }, (_, i) => i) } }).message).toMatch(/at most 100/);
  });
});

describe('matchesMetadataFilter', () => {
  it('treats a missing key as not equal, and compares only values of the same type', () => {
    const m = { n: 2, s: 'b', z: null, t: true };
    expect(matchesMetadataFilter(ok({ missing: { $ne: 1 } }), m)).toBe(true);
    expect(matchesMetadataFilter(ok({ missing: { $nin: [1] } }), m)).toBe(true);
    expect(matchesMetadataFilter(ok({ missing: null }), m)).toBe(false);
    expect(matchesMetadataFilter(ok({ z: null, z2: { $exists: false } }), m)).toBe(true);
    expect(matchesMetadataFilter(ok({ n: { $gt: 1, $lte: 2 } }), m)).toBe(true);
    expect(matchesMetadataFilter(ok({ n: { $gt: '1' } }), m)).toBe(false);
    expect(matchesMetadataFilter(ok({ s: { $gte: 'a', $lt: 'c' } }), m)).toBe(true);
    expect(matchesMetadataFilter(ok({ t: { $in: [false, true] } }), m)).toBe(true);
  });
});
