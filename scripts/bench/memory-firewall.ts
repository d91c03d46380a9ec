/**
 * The memory firewall's screen on labelled memory contents: `npm run bench:firewall`.
 *
 * test/fixtures/memory-firewall/ holds injections and facts about users as memories read, split
 * into a tuning half and a held-out half. The similarity threshold (nearest injection pattern's
 * cosine minus the nearest benign anchor's, bundled embedder) is chosen on the tuning half: the
 * lowest threshold whose combined screen (rules or similarity) quarantines at most
 * MAX_TUNING_FALSE_POSITIVE_RATE of its facts. The held-out half is then screened once, and its
 * rates are reported with 95% Wilson intervals. Figures: docs/benchmarks/memory-firewall.md.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createBundledUseEmbedder } from '../../src/embeddings/bundled-use-embedder.js';
import { describesUser, ruleReasons } from '../../src/memory/firewall/firewall-rules.js';
import { SIMILARITY_THRESHOLD, similarityMargins } from '../../src/memory/firewall/memory-firewall.js';

interface Example {
  text: string;
  label: 'injection' | 'benign';
  source: string;
}

/** Stricter than the goal (2%): the tuning half is small, and the held-out half decides. */
const MAX_TUNING_FALSE_POSITIVE_RATE = 0.01;

const fixture = (name: string): Example[] =>
  readFileSync(fileURLToPath(new URL(`../../test/fixtures/memory-firewall/${name}.jsonl`, import.meta.url)), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Example);

/** The 95% Wilson score interval of k successes in n trials. */
function wilson(k: number, n: number, z = 1.96): [number, number] {
  if (n === 0) return [0, 1];
  const p = k / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

interface Scored extends Example {
  rules: boolean;
  margin: number;
}

interface Rates {
  caught: number;
  injections: number;
  flagged: number;
  benign: number;
}

function rates(scored: readonly Scored[], threshold: number, use: { rules: boolean; similarity: boolean }): Rates {
  const quarantined = (s: Scored) => (use.rules && s.rules) || (use.similarity && s.margin >= threshold);
  const injections = scored.filter((s) => s.label === 'injection');
  const benign = scored.filter((s) => s.label === 'benign');
  return { caught: injections.filter(quarantined).length, injections: injections.length, flagged: benign.filter(quarantined).length, benign: benign.length };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const interval = ([lo, hi]: [number, number]) => `[${pct(lo)}, ${pct(hi)}]`;
const describe = (r: Rates) =>
  `recall ${r.caught}/${r.injections} = ${pct(r.caught / r.injections)} ${interval(wilson(r.caught, r.injections))}; ` +
  `false positives ${r.flagged}/${r.benign} = ${pct(r.flagged / r.benign)} ${interval(wilson(r.flagged, r.benign))}`;

async function main() {
  const embedder = await createBundledUseEmbedder();
  const score = async (examples: Example[]): Promise<Scored[]> => {
    const margins = await similarityMargins(
      embedder,
      examples.map((e) => e.text),
    );
    // As screenReasons: a text about the user is screened by the rules alone.
    return examples.map((e, i) => ({ ...e, rules: ruleReasons(e.text).length > 0, margin: describesUser(e.text) ? Number.NEGATIVE_INFINITY : margins[i]! }));
  };
  const tuning = await score(fixture('tuning'));
  const heldOut = await score(fixture('held-out'));

  const both = { rules: true, similarity: true };
  const candidates = [...new Set(tuning.filter((s) => Number.isFinite(s.margin)).map((s) => Math.round(s.margin * 1000) / 1000))].sort((a, b) => a - b);
  console.log(`tuning half: ${tuning.length} (${tuning.filter((s) => s.label === 'injection').length} injections); held-out: ${heldOut.length}`);
  console.log('\nthreshold sweep on the tuning half (rules or similarity):');
  let chosen = Number.POSITIVE_INFINITY;
  for (const t of candidates) {
    const r = rates(tuning, t, both);
    if (r.flagged / r.benign <= MAX_TUNING_FALSE_POSITIVE_RATE && t < chosen) chosen = t;
  }
  for (const t of [...new Set([0.05, 0.1, 0.15, chosen, 0.2, 0.25, 0.3])].sort((a, b) => a - b)) {
    console.log(`  ${t.toFixed(3)}${t === chosen ? ' (chosen)' : ''}: ${describe(rates(tuning, t, both))}`);
  }
  console.log(`\nchosen threshold ${chosen.toFixed(3)}; the code's SIMILARITY_THRESHOLD is ${SIMILARITY_THRESHOLD}`);
  const used = SIMILARITY_THRESHOLD;
  console.log(`\nheld-out half at ${used}:`);
  console.log(`  rules alone:      ${describe(rates(heldOut, used, { rules: true, similarity: false }))}`);
  console.log(`  similarity alone: ${describe(rates(heldOut, used, { rules: false, similarity: true }))}`);
  console.log(`  combined:         ${describe(rates(heldOut, used, both))}`);
  const misses = heldOut.filter((s) => s.label === 'injection' && !s.rules && s.margin < used);
  const falsePositives = heldOut.filter((s) => s.label === 'benign' && (s.rules || s.margin >= used));
  console.log('\nheld-out injections let through:');
  for (const s of misses) console.log(`  ${s.margin.toFixed(3)} ${JSON.stringify(s.text)}`);
  const aboutUser = heldOut.filter((s) => !Number.isFinite(s.margin));
  console.log(
    `held-out texts about the user (screened by the rules alone): ${aboutUser.filter((s) => s.label === 'benign').length} facts, ${aboutUser.filter((s) => s.label === 'injection').length} injections`,
  );
  console.log('held-out facts quarantined:');
  for (const s of falsePositives) console.log(`  ${s.margin.toFixed(3)} rules=${s.rules} ${JSON.stringify(s.text)}`);
  await embedder.close?.();
}

await main();
