/**
 * BEIR-format retrieval data (corpus.jsonl, queries.jsonl, qrels TSV) and the metrics BEIR reports,
 * computed as pytrec_eval / trec_eval do so numbers compare with published tables.
 */
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface BeirDocument {
  id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  id: string;
  text: string;
}

/** Query id → document id → graded relevance (0 = judged not relevant). */
export type Qrels = Map<string, Map<string, number>>;

async function* lines(path: string): AsyncGenerator<string> {
  const reader = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  for await (const line of reader) if (line.trim() !== '') yield line;
}

function firstExisting(paths: string[]): string {
  const found = paths.find((p) => existsSync(p));
  if (!found) throw new Error(`none of these files exists: ${paths.join(', ')}`);
  return found;
}

const asId = (value: unknown): string => String(value);

export async function loadCorpus(dir: string): Promise<BeirDocument[]> {
  const docs: BeirDocument[] = [];
  for await (const line of lines(join(dir, 'corpus.jsonl'))) {
    const row = JSON.parse(line) as { _id: unknown; title?: string; text?: string };
    docs.push({ id: asId(row._id), title: row.title ?? '', text: row.text ?? '' });
  }
  return docs;
}

/** `queries-<split>.jsonl` (this project's layout) or BEIR's single `queries.jsonl`. */
export async function loadQueries(dir: string, split?: string): Promise<BeirQuery[]> {
  const path = firstExisting([...(split ? [join(dir, `queries-${split}.jsonl`)] : []), join(dir, 'queries.jsonl')]);
  const queries: BeirQuery[] = [];
  for await (const line of lines(path)) {
    const row = JSON.parse(line) as { _id: unknown; text?: string };
    queries.push({ id: asId(row._id), text: row.text ?? '' });
  }
  return queries;
}

/** `qrels-<split>.tsv` or BEIR's `qrels/<split>.tsv`; a header line is skipped. */
export async function loadQrels(dir: string, split = 'test'): Promise<Qrels> {
  const path = firstExisting([join(dir, `qrels-${split}.tsv`), join(dir, 'qrels', `${split}.tsv`)]);
  const qrels: Qrels = new Map();
  for await (const line of lines(path)) {
    const [queryId, docId, score] = line.split('\t');
    if (queryId === undefined || docId === undefined || score === undefined) continue;
    const grade = Number(score);
    if (!Number.isFinite(grade)) continue; // the header
    let judged = qrels.get(queryId);
    if (!judged) qrels.set(queryId, (judged = new Map()));
    judged.set(docId, grade);
  }
  return qrels;
}

/**
 * nDCG@k with trec_eval's linear gain (gain = grade, discount = log2(rank + 1)), the ideal ranking
 * being the judged documents by grade. A query without relevant documents scores 0.
 */
export function ndcgAtK(ranked: readonly string[], judged: ReadonlyMap<string, number>, k = 10): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    const grade = judged.get(id) ?? 0;
    if (grade > 0) dcg += grade / Math.log2(i + 2);
  });
  const ideal = [...judged.values()]
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k);
  const idcg = ideal.reduce((sum, grade, i) => sum + grade / Math.log2(i + 2), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

/** Share of the relevant (grade > 0) documents found in the top k. */
export function recallAtK(ranked: readonly string[], judged: ReadonlyMap<string, number>, k = 100): number {
  const relevant = [...judged].filter(([, grade]) => grade > 0).map(([id]) => id);
  if (relevant.length === 0) return 0;
  const top = new Set(ranked.slice(0, k));
  return relevant.filter((id) => top.has(id)).length / relevant.length;
}

export interface RetrievalMetrics {
  ndcgAt10: number;
  recallAt100: number;
  queries: number;
}

/**
 * Means over the queries that have judgements, as BEIR reports them; a judged query missing from
 * `runs` counts as retrieving nothing. Ids equal to the query id are dropped first, as BEIR does
 * for corpora where queries are also documents.
 */
export function evaluate(
  runs: ReadonlyMap<string, readonly string[]>,
  qrels: Qrels,
  { ignoreIdenticalIds = true }: { ignoreIdenticalIds?: boolean } = {},
): RetrievalMetrics {
  let ndcg = 0;
  let recall = 0;
  let queries = 0;
  for (const [queryId, judged] of qrels) {
    if (![...judged.values()].some((g) => g > 0)) continue;
    const run = runs.get(queryId) ?? [];
    const ranked = ignoreIdenticalIds ? run.filter((id) => id !== queryId) : run;
    ndcg += ndcgAtK(ranked, judged, 10);
    recall += recallAtK(ranked, judged, 100);
    queries++;
  }
  return { ndcgAt10: queries ? ndcg / queries : 0, recallAt100: queries ? recall / queries : 0, queries };
}
