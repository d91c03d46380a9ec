import { describe, expect, it } from 'vitest';
import { analyze, createAnalyzer, defaultAnalyzer, termFrequencies } from '../../../src/retrieval/bm25/analyzer.js';

describe('BM25 analyzer', () => {
  it('lower-cases, drops Lucene stopwords and Porter-stems', () => {
    expect(analyze('The Infections were treated with Antibiotics')).toEqual(['infect', 'were', 'treat', 'antibiot']);
  });

  it('keeps numbers, decimals and alphanumerics whole', () => {
    expect(analyze('p53 levels rose 3.14 times in 2019; H1N1 and CD4+ cells')).toEqual(['p53', 'level', 'rose', '3.14', 'time', '2019', 'h1n1', 'cd4', 'cell']);
  });

  it('splits hyphenated and underscored compounds, and can also glue them', () => {
    expect(analyze('COVID-19 and IL-6 in data_set')).toEqual(['covid', '19', 'il', '6', 'data', 'set']);
    const glued = createAnalyzer({ compounds: 'split-and-join' });
    expect(glued.analyze('COVID-19 vs covid19')).toEqual(['covid', '19', 'covid19', 'vs', 'covid19']);
  });

  it('handles possessives, contractions and dotted abbreviations', () => {
    expect(analyze("the patient's U.S.A. trial, e.g. phase-2; don't")).toEqual(['patient', 'usa', 'trial', 'eg', 'phase', '2', 'dont']);
  });

  it('is Unicode-aware: accents fold in Latin script, other scripts stay whole', () => {
    expect(analyze('Naïve café RÉSUMÉ')).toEqual(analyze('naive cafe resume'));
    expect(analyze('β-catenin αβ T-cells')).toEqual(['β', 'catenin', 'αβ', 't', 'cell']);
    expect(analyze('Москва 東京 हिन्दी')).toEqual(['москва', '東京', 'हिन्दी']);
    // NFKC: ligatures and full-width forms from PDFs match their plain spelling.
    expect(analyze('ﬁnding ＡＢＣ')).toEqual(analyze('finding abc'));
  });

  it('drops over-long terms', () => {
    expect(analyze(`key ${'a1'.repeat(40)} value`)).toEqual(['kei', 'valu']);
    expect(createAnalyzer({ maxTermLength: 200 }).analyze('a1'.repeat(40))).toHaveLength(1);
  });

  it('can switch stemming and stopwords off, or use another list', () => {
    expect(createAnalyzer({ stem: false, stopwords: 'none' }).analyze('The running dogs')).toEqual(['the', 'running', 'dogs']);
    expect(createAnalyzer({ stopwords: 'extended' }).analyze('they were not running')).toEqual(['run']);
    expect(createAnalyzer({ stopwords: new Set(['dogs']) }).analyze('the dogs')).toEqual(['the']);
  });

  it('counts term frequencies, whose sum is the document length', () => {
    const tf = termFrequencies('Cells divide; the cell divided, and cells die.');
    expect(Object.fromEntries(tf)).toEqual({ cell: 3, divid: 2, die: 1 });
    expect([...tf.values()].reduce((a, b) => a + b)).toBe(analyze('Cells divide; the cell divided, and cells die.').length);
  });

  it('names its configuration, so postings from another one are never mixed in', () => {
    expect(defaultAnalyzer.id).toBe('en-v1:porter:lucene:split:64');
    expect(createAnalyzer({ stem: false }).id).not.toBe(defaultAnalyzer.id);
    expect(createAnalyzer({ compounds: 'split-and-join' }).id).not.toBe(defaultAnalyzer.id);
  });

  it('returns nothing for text without words', () => {
    expect(analyze('  ... --- !!! ')).toEqual([]);
    expect(termFrequencies('').size).toBe(0);
  });
});
