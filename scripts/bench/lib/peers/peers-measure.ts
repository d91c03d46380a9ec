import { performance } from 'node:perf_hooks';
import { DEFAULT_EF_SEARCH } from '../../../../src/db/filtered-vector-search.js';
import { type ClusteredSet, TAG_CASES, exactTopK, percentile } from '../clustered-set.js';
import { seededRandom, shuffleInPlace } from '../../../lib/static-embedder/seeded-random.js';
import { TOP_K, log, type System } from './peers-config.js';

// The interleaved timing of every system on the same queries, and the ratios between them.
export const HAND_SQL = (tagged: boolean, columns = 'key', limit = TOP_K) => `SELECT ${columns} FROM memories
  WHERE tenant_id = $1 AND agent_id = $2 AND valid_to IS NULL AND (expires_at IS NULL OR expires_at > now())${tagged ? ' AND tags && $4::text[]' : ''}
  ORDER BY embedding <=> $3::vector LIMIT ${limit}`;

/** What a memory search returns of each row (memoryColumns, with the id): the anchor doing the same work as the store. */
export const MEMORY_COLUMNS =
  'id, key, content, tags, metadata, agent_id, user_id, sources, valid_from, valid_until, valid_to, expires_at, status, quarantine_reasons, created_at, updated_at';
export const HAND_MEMORY_SYSTEM = `hand-written SQL, ef_search ${DEFAULT_EF_SEARCH}, a memory's columns`;
/** memrag's vector statement with no payload: ids and distances, as the hand-written statement returns keys. */
export const MEMRAG_IDS_SYSTEM = 'memrag memories, ids only';
/**
 * The memory search's own statement, as the store prepares it, run on a connection of its own
 * with the search connections' settings: the server's part of a memory search, without the
 * store's pool, row mapping and ranking in Node (its exact fallback, when the walk comes short,
 * left out).
 */
export const MEMRAG_STATEMENT_SYSTEM = 'memrag memories, its statement alone';
/** The hand-written statement with memrag's order repair on a filter: twice the rows fetched, the best kept (equal recall). */
export const HAND_REPAIRED_SYSTEM = `hand-written SQL, ef_search ${DEFAULT_EF_SEARCH}, ${2 * TOP_K} rows, best ${TOP_K}`;
/** Both: a memory's columns and the repair, the work a memory search does. */
export const HAND_SAME_WORK_SYSTEM = `${HAND_REPAIRED_SYSTEM}, a memory's columns`;

export const rowOfKey = (key: string) => Number(key.slice(1));

export async function measure(
  systems: System[],
  set: ClusteredSet,
  rows: number,
  passes: number,
  results: Record<string, string | number>[],
  driver: string,
  insert: Record<string, string>,
) {
  const truth = new Map(TAG_CASES.map((c) => [c.label, Array.from({ length: set.queries }, (_, q) => exactTopK(set, q, rows, c.matches, TOP_K))]));
  for (let pass = 1; pass <= passes; pass++) {
    for (const c of TAG_CASES) {
      const active = systems.filter((s) => !s.skip?.(c, pass));
      for (const s of active) for (let w = 0; w < 3; w++) await s.search(w, c);
      const times = new Map(active.map((s) => [s.name, [] as number[]]));
      const hits = new Map(active.map((s) => [s.name, { hit: 0, rows: 0, n: 0 }]));
      // Each query in a new order: the systems share the server's cache, and one that always ran
      // after the same other met its pages warm or cold (the same statement in two slots: 0.5 ms apart).
      const random = seededRandom(pass * 1000 + TAG_CASES.indexOf(c));
      for (let q = 0; q < set.queries; q++) {
        for (const s of shuffleInPlace([...active], random)) {
          if (q >= (s.queries ?? set.queries)) continue;
          const t = performance.now();
          const got = await s.search(q, c);
          times.get(s.name)!.push(performance.now() - t);
          const want = new Set(truth.get(c.label)![q]!);
          const h = hits.get(s.name)!;
          h.hit += got.filter((i) => want.has(i)).length;
          h.rows += got.length;
          h.n += 1;
        }
      }
      for (const s of active) {
        const t = times.get(s.name)!;
        const h = hits.get(s.name)!;
        const r = {
          driver,
          pass,
          case: c.label,
          system: s.name,
          'p50 ms': +percentile(t, 50).toFixed(2),
          'p95 ms': +percentile(t, 95).toFixed(2),
          'recall@10': +(h.hit / (h.n * TOP_K)).toFixed(3),
          'rows/query': +(h.rows / h.n).toFixed(1),
          'insert rows/s': insert[s.name] ?? '',
        };
        results.push(r);
        log(JSON.stringify(r));
      }
    }
  }
}

export function ratios(results: Record<string, string | number>[]) {
  const out: Record<string, string>[] = [];
  for (const r of results) {
    if (!String(r.system).startsWith('memrag')) continue;
    const at = (name: string) => results.find((x) => x.driver === r.driver && x.pass === r.pass && x.case === r.case && x.system === name);
    const hand = at('hand-written SQL');
    const handEqual = at(`hand-written SQL, ef_search ${DEFAULT_EF_SEARCH}`);
    const mastra = at('PgVector');
    const withColumns = r.system === 'memrag memories' || r.system === MEMRAG_STATEMENT_SYSTEM;
    const handColumns = withColumns ? at(HAND_MEMORY_SYSTEM) : undefined;
    const handRepaired = at(r.system === MEMRAG_IDS_SYSTEM ? HAND_REPAIRED_SYSTEM : withColumns ? HAND_SAME_WORK_SYSTEM : '');
    out.push({
      driver: String(r.driver),
      pass: String(r.pass),
      case: String(r.case),
      system: String(r.system),
      'p50 / hand-written': hand ? (Number(r['p50 ms']) / Number(hand['p50 ms'])).toFixed(2) : '',
      [`p50 / hand-written ef ${DEFAULT_EF_SEARCH}`]: handEqual ? (Number(r['p50 ms']) / Number(handEqual['p50 ms'])).toFixed(2) : '',
      [`p50 / hand-written ef ${DEFAULT_EF_SEARCH}, same columns`]: handColumns ? (Number(r['p50 ms']) / Number(handColumns['p50 ms'])).toFixed(2) : '',
      [`p50 / hand-written ef ${DEFAULT_EF_SEARCH}, repaired alike (same columns for memories)`]: handRepaired
        ? (Number(r['p50 ms']) / Number(handRepaired['p50 ms'])).toFixed(2)
        : '',
      'PgVector p50 / this': mastra ? (Number(mastra['p50 ms']) / Number(r['p50 ms'])).toFixed(1) : '',
    });
  }
  return out;
}
