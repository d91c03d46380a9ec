import { describe, expect, it } from 'vitest';
import { parseToolArguments } from '../../src/llm/tool-arguments.js';
import { backoffDelayMs } from '../../src/llm/retry.js';

describe('parseToolArguments', () => {
  it.each([
    ['{"a": 1}', { a: 1 }, false],
    ['', {}, false],
    ['{"a": [1, 2,],}', { a: [1, 2] }, true],
    ["{'a': 'it\\'s \"x\"'}", { a: 'it\'s "x"' }, true],
    ['{"a": {"b": "c', { a: { b: 'c' } }, true],
    ['{"a": ', { a: null }, true],
    ['```json\n{"a": 1}\n```', { a: 1 }, true],
  ])('parses %j', (raw, value, repaired) => {
    expect(parseToolArguments(raw)).toEqual({ ok: true, value, repaired });
  });

  it.each(['city=Paris', '[1, 2]', '42', '{a: 1}'])('rejects %j', (raw) => {
    expect(parseToolArguments(raw).ok).toBe(false);
  });
});

describe('backoffDelayMs', () => {
  it('grows exponentially up to the cap, with full jitter', () => {
    const opts = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((a) => backoffDelayMs(a, { ...opts, random: () => 0.999999 }))).toEqual([99, 199, 399, 799, 999]);
    expect(backoffDelayMs(3, { ...opts, random: () => 0 })).toBe(0);
  });
});
