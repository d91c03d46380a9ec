import { describe, expect, it } from 'vitest';
import { builtOnce } from '../../src/util/built-once.js';

describe('builtOnce', () => {
  it('makes a key’s value once and keeps at most max, the oldest made dropped first', () => {
    const made: string[] = [];
    const cached = builtOnce<string>(2);
    const get = (key: string) => cached(key, () => (made.push(key), `${key}!`));
    expect([get('a'), get('a'), get('b'), get('a')]).toEqual(['a!', 'a!', 'b!', 'a!']);
    expect(made).toEqual(['a', 'b']);
    get('c');
    get('b');
    get('a');
    expect(made).toEqual(['a', 'b', 'c', 'a']);
  });
});
