import pg from 'pg';
import { TAG_CASES, type TagCase } from '../clustered-set.js';

// Every statement the pg driver sends while `captured` is set: the SQL each system runs, to print and explain.
let captured: { name?: string; text: string; values?: unknown[] }[] | null = null;
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (captured) {
    const [first, second] = args as [string | { name?: string; text: string; values?: unknown[] }, unknown];
    if (typeof first === 'string') captured.push({ text: first, ...(Array.isArray(second) ? { values: second } : {}) });
    else if (first && typeof first === 'object' && 'text' in first) {
      const values = first.values ?? (Array.isArray(second) ? second : undefined);
      captured.push({ ...(first.name ? { name: first.name } : {}), text: first.text, ...(values ? { values } : {}) });
    }
  }
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

/** The named (prepared) statements `run` sends, in order. */
export async function capturePrepared(run: () => Promise<unknown>): Promise<{ name: string; text: string }[]> {
  captured = [];
  try {
    await run();
    return captured.flatMap((s) => (s.name ? [{ name: s.name, text: s.text }] : []));
  } finally {
    captured = null;
  }
}

const isRanked = (text: string) => text.includes('<=>') && /^\s*(select|with|explain)/i.test(text.split(';').pop()!.trim() || text);

/** Replays one captured search in a transaction, the ranked statements under EXPLAIN ANALYZE. */
async function explain(pool: pg.Pool, statements: { text: string; values?: unknown[] }[]): Promise<string> {
  const client = await pool.connect();
  const out: string[] = [];
  try {
    await client.query('BEGIN');
    for (const s of statements) {
      if (/^\s*(begin|commit|rollback)\s*$/i.test(s.text)) continue;
      const parts = s.values ? [s.text] : s.text.split(/;\s*(?=\S)/);
      for (const [i, text] of parts.entries()) {
        const last = i === parts.length - 1;
        out.push(`  SQL: ${text.replace(/\s+/g, ' ').trim().slice(0, 900)}`);
        if (isRanked(text) && last) {
          const plan = await client.query({ text: `EXPLAIN (ANALYZE, COSTS OFF, BUFFERS OFF) ${text}`, ...(s.values ? { values: s.values } : {}) });
          out.push(...plan.rows.map((r: Record<string, string>) => `    ${r['QUERY PLAN']}`));
        } else {
          await client.query(s.values ? { text, values: s.values } : text);
        }
      }
    }
  } finally {
    await client.query('ROLLBACK').catch(() => {});
    client.release();
  }
  return out.join('\n');
}

export async function printPlans(title: string, pool: pg.Pool, run: (c: TagCase) => Promise<unknown>) {
  for (const c of TAG_CASES) {
    captured = [];
    await run(c);
    const statements = captured;
    captured = null;
    console.log(`\n--- ${title}, ${c.label}: ${statements.length} statements per search`);
    console.log(await explain(pool, statements));
  }
}
