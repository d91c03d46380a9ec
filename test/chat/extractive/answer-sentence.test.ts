import { describe, expect, it } from 'vitest';
import { readsAsSentence } from '../../../src/chat/extractive/answer-sentence.js';

describe('readsAsSentence', () => {
  it('refuses headings, labels and table cells: under three words, or no verb', () => {
    for (const unit of [
      'Revenue',
      'Costs',
      '4.2 Costs',
      'Quarterly report',
      'Operating costs by region',
      'Notes to the financial statements',
      'May 2025 figures',
      "Management's discussion and analysis of financial condition and results of operations",
      'Revenue 4.2 3.9 3.1 2.8 2.5 2.2 1.9 1.6 1.3 1.1 0.9 0.7',
    ]) {
      expect(readsAsSentence(unit), unit).toBe(false);
    }
  });

  it('takes a unit of three words or more closed by a stop: imperatives and bare presents have no other mark', () => {
    for (const unit of ['Open the vent valve.', 'Plants need light.', 'Is it safe to drink?', 'Keep it dry!', 'He said "stop the pump."']) {
      expect(readsAsSentence(unit), unit).toBe(true);
    }
    expect(readsAsSentence('Yes, indeed.')).toBe(false);
    expect(readsAsSentence('The word derives from pharmakon, meaning "drug".[n 1]')).toBe(true);
  });

  it('finds the verb of an unclosed unit from what English marks', () => {
    const withVerbs = [
      'Carol has a cat called Biscuit',
      'The pump must be primed',
      'Revenue grew by 12 percent',
      'Sales were flat this year',
      'The valve opened slowly',
      "Don't start it dry",
      'They drink green tea',
      'I live in Berlin',
    ];
    for (const unit of withVerbs) expect(readsAsSentence(unit), unit).toBe(true);
    // Twelve words or more are prose, though no mark shows its verb; shorter and unclosed, such a unit is taken for a heading.
    expect(readsAsSentence('Hyperbaric medicine uses special oxygen chambers to increase the partial pressure of oxygen in the blood')).toBe(true);
    expect(readsAsSentence('Hyperbaric medicine uses special oxygen chambers')).toBe(false);
    // "Built" and "Rose" capitalised open a heading as often as a sentence: only lower case counts.
    expect(readsAsSentence('Rose Garden Tours')).toBe(false);
  });
});
