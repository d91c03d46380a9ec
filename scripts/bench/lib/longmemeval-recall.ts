/** The recall tables bench:longmemeval prints: per question type and retriever, and hybrid against the words alone. */

/** The words alone, in the same run: the floor memrag's hybrid must not go below. */
export const BM25_RETRIEVERS = ['bm25 turns', 'bm25 sessions'] as const;

export interface Recall {
  /** Session recall_all@5, @10, recall_any@5, turn recall_all@10 (NaN for a ranking of sessions alone): sums over n questions. */
  s5: number;
  s10: number;
  a5: number;
  t10: number;
  n: number;
}

const fmt = (x: number) => (Number.isNaN(x) ? '  - ' : x.toFixed(2));

export function printRecall(recall: Map<string, Recall>, types: string[], retrievers: readonly string[]) {
  console.log('session R_all@5 / session R_all@10 / session R_any@5 / turn R_all@10');
  console.log(['type'.padEnd(30), ...retrievers.map((r) => r.padStart(23))].join(''));
  for (const t of [...types, 'all']) {
    const cells = retrievers.map((r) => {
      const v = recall.get(`${r}|${t}`);
      return (v ? [v.s5, v.s10, v.a5, v.t10].map((x) => fmt(x / v.n)).join('/') : '-').padStart(23);
    });
    console.log([`${t} (${recall.get(`${retrievers[0]}|${t}`)?.n ?? 0})`.padEnd(30), ...cells].join(''));
  }
}

/**
 * Hybrid against the better of the two BM25s on each measure, per type: the words alone are the
 * floor. A line ending in "below" names a type and measure where hybrid lost to them.
 */
export function printAgainstWords(recall: Map<string, Recall>, types: string[]) {
  const measures = [
    ['session R_all@5', (r: Recall) => r.s5 / r.n],
    ['session R_any@5', (r: Recall) => r.a5 / r.n],
    ['turn R_all@10', (r: Recall) => r.t10 / r.n],
  ] as const;
  console.log('\nhybrid against the words alone (the better BM25 of turns and sessions), hybrid − BM25:');
  console.log(['type'.padEnd(30), ...measures.map(([name]) => name.padStart(18))].join(''));
  let below = 0;
  for (const t of [...types, 'all']) {
    const hybrid = recall.get(`hybrid|${t}`);
    if (!hybrid) continue;
    const cells = measures.map(([, of]) => {
      const words = Math.max(...BM25_RETRIEVERS.map((b) => recall.get(`${b}|${t}`)).flatMap((r) => (r && !Number.isNaN(of(r)) ? [of(r)] : [])));
      const gap = of(hybrid) - words;
      if (gap < -1e-9) below++;
      return `${gap >= 0 ? '+' : ''}${gap.toFixed(2)}${gap < -1e-9 ? ' below' : ''}`.padStart(18);
    });
    console.log([t.padEnd(30), ...cells].join(''));
  }
  console.log(below === 0 ? 'hybrid ≥ BM25 everywhere' : `hybrid below BM25 in ${below} cells`);
}
