import { describe, expect, it } from 'vitest';
import { EdgeMatchTimeoutError, nextNode } from '../../src/workflows/workflow-edges.js';

describe('an outputMatches edge with a catastrophic regex (ReDoS)', () => {
  it('is stopped by its time bound instead of freezing the event loop', () => {
    const edges = [
      { from: 'a', to: 'b', when: { outputEquals: 'no' } },
      { from: 'a', to: 'c', when: { outputMatches: '(a+)+$' } },
    ];
    const output = `${'a'.repeat(50_000)}!`;
    const started = Date.now();
    expect(() => nextNode({ edges }, 'a', output)).toThrow(EdgeMatchTimeoutError);
    expect(() => nextNode({ edges }, 'a', output)).toThrow(/edges\.1\.when\.outputMatches/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('still routes on a sane pattern', () => {
    const edges = [{ from: 'a', to: 'b', when: { outputMatches: '^tech' } }];
    expect(nextNode({ edges }, 'a', 'technical')).toBe('b');
    expect(nextNode({ edges }, 'a', 'billing')).toBeUndefined();
  });
});
