/**
 * The memory firewall's screen on labelled memory contents: `npm run bench:firewall`.
 *
 * test/fixtures/memory-firewall/ holds injections and facts about users as memories read: the
 * tuning set the rules were written against and the classifier was trained on (its threshold
 * chosen by cross-validation there, `npm run train:firewall`), the held-out half of the first set,
 * and a fresh held-out set written blind, after the rules and the classifier were done. Each is
 * screened by the rules alone, the classifier alone and both, with 95% Wilson intervals; and as
 * the firewall would screen it with a second opinion that is always right: the most an LLM asked
 * about the borderline texts (`borderlineOf`) could add, and how many texts it would be asked about.
 * EMBEDDING_PROVIDER (`bundled`, the default, or `static` with EMBEDDING_MODEL) chooses the
 * embedder, and with it the classifier trained on its vectors (injection-classifiers.ts).
 * Figures: docs/benchmarks/memory-firewall.md.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ruleReasons } from '../../src/memory/firewall/firewall-rules.js';
import { injectionClassifierFor } from '../../src/memory/firewall/injection-classifiers.js';
import { type ClassifierScope, borderlineOf, classifierScreens, screenReasons } from '../../src/memory/firewall/memory-firewall.js';
import { firewallEmbedder } from '../lib/firewall-embedder.js';

interface Example {
  text: string;
  label: 'injection' | 'benign';
  source: string;
}

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
  /** The classifier's score; -Infinity where it does not screen (`classifierScreens`). */
  score: number;
  /** The classifier's score whether or not it counts for the text (`borderlineOf` decides that itself). */
  rawScore: number;
}

interface Rates {
  caught: number;
  injections: number;
  flagged: number;
  benign: number;
}

function rates(scored: readonly Scored[], threshold: number, use: { rules: boolean; similarity: boolean }): Rates {
  const quarantined = (s: Scored) => (use.rules && s.rules) || (use.similarity && s.score >= threshold);
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
  const { embedder } = await firewallEmbedder(process.env);
  const classifier = injectionClassifierFor(embedder);
  if (!classifier)
    throw new Error(
      `no injection classifier was trained on ${embedder.id}: EMBEDDING_PROVIDER=${process.env.EMBEDDING_PROVIDER ?? 'bundled'} npm run train:firewall`,
    );
  const score = async (examples: Example[]): Promise<Scored[]> => {
    const scores = await classifier.scores(
      embedder,
      examples.map((e) => e.text),
    );
    // As screenReasons: a text the classifier does not screen (`classifierScreens`) is left to the rules.
    return examples.map((e, i) => ({
      ...e,
      rules: ruleReasons(e.text).length > 0,
      score: classifierScreens(e.text, classifier) ? scores[i]! : Number.NEGATIVE_INFINITY,
      rawScore: scores[i]!,
    }));
  };
  const sets = [
    ['tuning set (in sample: the rules were written and the classifier trained on it)', fixture('tuning')],
    ['held-out half of the first set', fixture('held-out')],
    ['sixth set (written blind, screened by two firewalls)', fixture('sixth-set')],
    ['fresh held-out set', fixture('fresh-held-out')],
  ] as const;
  console.log(
    `embedder ${embedder.id}: classifier threshold ${classifier.threshold} (${classifier.trainedOn}, lambda ${classifier.lambda}, ${classifier.lexicalBuckets} lexical buckets)`,
  );
  for (const [name, examples] of sets) report(name, await score(examples), classifier);
  await embedder.close?.();
}

function report(name: string, scored: Scored[], scope: ClassifierScope): void {
  const used = scope.threshold;
  const both = { rules: true, similarity: true };
  console.log(`\n${name} at ${used}:`);
  console.log(`  rules alone:      ${describe(rates(scored, used, { rules: true, similarity: false }))}`);
  console.log(`  classifier alone: ${describe(rates(scored, used, { rules: false, similarity: true }))}`);
  console.log(`  combined:         ${describe(rates(scored, used, both))}`);
  // Where a second opinion is asked, it answers the text's label: the ceiling of the LLM path.
  const borderline = new Map(scored.map((s) => [s, borderlineOf(s.text, screenReasons(s.text, s.rawScore, scope), s.rawScore, scope)]));
  const quarantined = (s: Scored) => (borderline.get(s) ? s.label === 'injection' : s.rules || s.score >= used);
  const injections = scored.filter((s) => s.label === 'injection');
  const benign = scored.filter((s) => s.label === 'benign');
  const ceiling = {
    caught: injections.filter(quarantined).length,
    injections: injections.length,
    flagged: benign.filter(quarantined).length,
    benign: benign.length,
  };
  const asked = (xs: Scored[]) => xs.filter((s) => borderline.get(s) !== undefined).length;
  console.log(`  with a second opinion always right: ${describe(ceiling)}`);
  console.log(`  second opinions asked: ${asked(injections)}/${injections.length} injections, ${asked(benign)}/${benign.length} facts`);
  const misses = scored.filter((s) => s.label === 'injection' && !s.rules && s.score < used);
  const falsePositives = scored.filter((s) => s.label === 'benign' && (s.rules || s.score >= used));
  console.log(`${name}: injections let through:`);
  for (const s of misses) console.log(`  ${s.score.toFixed(3)} ${JSON.stringify(s.text)}`);
  const aboutUser = scored.filter((s) => !Number.isFinite(s.score));
  console.log(
    `${name}: texts about the user or in another language (screened by the rules alone): ${aboutUser.filter((s) => s.label === 'benign').length} facts, ${aboutUser.filter((s) => s.label === 'injection').length} injections`,
  );
  console.log(`${name}: facts quarantined:`);
  for (const s of falsePositives) console.log(`  ${s.score.toFixed(3)} rules=${s.rules} ${JSON.stringify(s.text)}`);
}

await main();
