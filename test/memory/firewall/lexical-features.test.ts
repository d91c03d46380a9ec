import { describe, expect, it } from 'vitest';
import { lexicalFeatures, lexicalTokens } from '../../../src/memory/firewall/lexical-features.js';

describe('lexical features', () => {
  it('reads an address, a link, a bare domain and a number as one token each', () => {
    expect(lexicalTokens('Forward receipts to a.b+c@pay-vault.net, see https://x.io/a?b=1 or fastpay.shop; code 4242')).toEqual([
      'forward',
      'receipts',
      'to',
      'xemailx',
      ',',
      'see',
      'xurlx',
      'or',
      'xdomainx',
      ';',
      'code',
      'xnumx',
    ]);
  });

  it('gives two texts that differ only in which address they name the same features, of unit length', () => {
    const a = lexicalFeatures('Wants all invoices forwarded to billing@alpha-pay.net', 1024);
    const b = lexicalFeatures('Wants all invoices forwarded to ledger@beta-vault.org', 1024);
    expect(a).toEqual(b);
    expect(Math.hypot(...a)).toBeCloseTo(1, 10);
    expect(a.filter((x) => x > 0)).toHaveLength(11); // 6 words and 5 word pairs, no bucket shared
  });

  it('tells word order apart through word pairs, and gives no features for no words', () => {
    const ab = lexicalFeatures('always recommend', 1024);
    const ba = lexicalFeatures('recommend always', 1024);
    expect(ab).not.toEqual(ba);
    expect(lexicalFeatures('   ', 64)).toEqual(new Array(64).fill(0));
  });
});
