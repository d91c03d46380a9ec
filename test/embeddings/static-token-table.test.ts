import { describe, expect, it } from 'vitest';
import { formatTokenTable, parseTokenTable } from '../../src/embeddings/static-token-table.js';

describe('static token table', () => {
  it('round-trips ids, weights and pieces, spaces and quotes included', () => {
    const table = { ids: [6, 9, 4000], pieces: ['.', '\u2581the', '"a b'], weights: [0.001234567, 1, 0] };
    const text = formatTokenTable(table);
    expect(text).toBe('id\tweight\tpiece\n6\t0.001234567\t.\n9\t1\t\u2581the\n4000\t0\t"a b\n');
    expect(parseTokenTable(text)).toEqual(table);
  });

  it('names the first malformed line', () => {
    expect(() => parseTokenTable('id,weight,piece\n')).toThrow('does not start with the header');
    expect(() => parseTokenTable('id\tweight\tpiece\n6\t1\t.\n7\t-1\ts\n')).toThrow('line 3 is not');
    expect(() => parseTokenTable('id\tweight\tpiece\n6\t1\n')).toThrow('line 2 is not');
    expect(() => parseTokenTable('id\tweight\tpiece\nx\t1\t.\n')).toThrow('line 2 is not');
  });
});
