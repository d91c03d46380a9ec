/**
 * Trains the memory firewall's classifier for one embedder: `npm run train:firewall`.
 *
 * EMBEDDING_PROVIDER chooses the embedder: `bundled` (USE lite, the default) writes
 * src/memory/firewall/injection-classifier-weights.ts, `static` (the model of EMBEDDING_MODEL,
 * default models/static-use-lite-v2) writes that version's file (injection-classifier-weights-static.ts
 * for the first, -static-v2.ts for the second) with the sha256 of the model's weights; the firewall
 * uses the one whose embedder is its own (injection-classifiers.ts).
 *
 * A logistic regression over the embedder's vectors of test/fixtures/memory-firewall/
 * tuning.jsonl (injections against facts) and their words hashed into buckets (lexical-features.ts),
 * class-weighted, L2-regularized. The buckets (none or some), the regularization, and whether texts
 * about the user and in other languages are screened by it, are chosen by 5-fold cross-validation on
 * the tuning set alone: the most injections rules or classifier quarantine out of fold, at the
 * lowest threshold where they quarantine at most 1% of the facts out of fold. Figures in
 * docs/benchmarks/memory-firewall.md.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { firewallEmbedder } from './lib/firewall-embedder.js';
import { readsAsEnglish } from '../src/memory/firewall/english-text.js';
import { describesUser, ruleReasons } from '../src/memory/firewall/firewall-rules.js';
import { trainLogistic } from '../src/memory/firewall/injection-classifier.js';
import { lexicalFeatures } from '../src/memory/firewall/lexical-features.js';

const FOLDS = 5;
const LAMBDAS = [0.001, 0.01, 0.03];
// Hashed word and word-pair buckets beside the embedder's vector (lexical-features.ts); 0: the vector alone.
const LEXICAL_BUCKETS = (process.env.TRAIN_LEXICAL_BUCKETS ?? '0,1024,4096').split(',').map(Number);
const MAX_FALSE_POSITIVE_RATE = 0.01;

const tuning = readFileSync(fileURLToPath(new URL('../test/fixtures/memory-firewall/tuning.jsonl', import.meta.url)), 'utf8')
  .trim()
  .split('\n')
  .map((line) => JSON.parse(line) as { text: string; label: 'injection' | 'benign' });

const { embedder, weightsFile, embedderSha256 } = await firewallEmbedder(process.env);
console.log(`embedder ${embedder.id}${embedderSha256 ? ` (weights sha256 ${embedderSha256})` : ''}`);
const embedded = await embedder.embed(tuning.map((t) => t.text));
await embedder.close?.();
const featuresOf = (buckets: number) => (buckets === 0 ? embedded : embedded.map((v, i) => [...v, ...lexicalFeatures(tuning[i]!.text, buckets)]));
const labels = tuning.map((t) => (t.label === 'injection' ? 1 : 0));
const rules = tuning.map((t) => ruleReasons(t.text).length > 0);
const aboutUser = tuning.map((t) => describesUser(t.text));
// As `classifierScreens`: whether the classifier's score counts for other languages is chosen here too.
const english = tuning.map((t) => readsAsEnglish(t.text));
const facts = labels.filter((y) => y === 0).length;
const injections = labels.length - facts;

interface Choice {
  lambda: number;
  lexicalBuckets: number;
  screensAboutUser: boolean;
  screensOtherLanguages: boolean;
  threshold: number;
  found: number;
  /** By the rules or the classifier: what the firewall would quarantine. */
  caught: number;
  falsePositives: number;
}
let best: Choice | undefined;
console.log(`tuning set: ${injections} injections, ${facts} facts; ${FOLDS}-fold cross-validation`);
for (const lexicalBuckets of LEXICAL_BUCKETS) {
  const vectors = featuresOf(lexicalBuckets);
  for (const lambda of LAMBDAS) {
    const outOfFold = new Array<number>(vectors.length).fill(0);
    for (let fold = 0; fold < FOLDS; fold++) {
      const train = vectors.map((_, i) => i).filter((i) => i % FOLDS !== fold);
      const model = trainLogistic(
        train.map((i) => vectors[i]!),
        train.map((i) => labels[i]!),
        lambda,
      );
      vectors.forEach((v, i) => {
        if (i % FOLDS === fold) outOfFold[i] = model.score(v);
      });
    }
    for (const [screensAboutUser, screensOtherLanguages] of [
      [false, true],
      [false, false],
      [true, true],
      [true, false],
    ] as const) {
      const screened = (i: number) => (screensOtherLanguages || english[i]!) && (screensAboutUser || !aboutUser[i]);
      const flagged = (i: number, t: number) => rules[i]! || (outOfFold[i]! >= t && screened(i));
      const thresholds = [...new Set(outOfFold.map((s) => Math.round(s * 1000) / 1000))].sort((a, b) => a - b);
      const threshold = thresholds.find((t) => labels.filter((y, i) => y === 0 && flagged(i, t)).length <= MAX_FALSE_POSITIVE_RATE * facts) ?? 1;
      const found = labels.filter((y, i) => y === 1 && outOfFold[i]! >= threshold && screened(i)).length;
      const caught = labels.filter((y, i) => y === 1 && flagged(i, threshold)).length;
      const falsePositives = labels.filter((y, i) => y === 0 && flagged(i, threshold)).length;
      console.log(
        `  ${lexicalBuckets} lexical buckets, lambda ${lambda}, ${screensAboutUser ? 'about the user too' : 'not about the user'}, ${screensOtherLanguages ? 'any language' : 'English only'}: threshold ${threshold.toFixed(3)}, classifier finds ${found}/${injections} out of fold, rules or classifier quarantine ${caught}/${injections} injections and ${falsePositives}/${facts} facts`,
      );
      if (!best || caught > best.caught) best = { lambda, lexicalBuckets, screensAboutUser, screensOtherLanguages, threshold, found, caught, falsePositives };
    }
  }
}
const chosen = best!;
const model = trainLogistic(featuresOf(chosen.lexicalBuckets), labels, chosen.lambda);
console.log(
  `chosen: ${chosen.lexicalBuckets} lexical buckets, lambda ${chosen.lambda}, ${chosen.screensAboutUser ? 'about the user too' : 'not about the user'}, ${chosen.screensOtherLanguages ? 'any language' : 'English only'}, threshold ${chosen.threshold}`,
);
const round = (x: number) => Math.round(x * 1e5) / 1e5;
const output = fileURLToPath(new URL(`../src/memory/firewall/${weightsFile}`, import.meta.url));
writeFileSync(
  output,
  `// biome-ignore-all lint/suspicious/noApproximativeNumericConstant: trained weights, which may land near a constant.
/** Written by scripts/train-firewall-classifier.ts (\`npm run train:firewall\`): do not edit. */
export const INJECTION_CLASSIFIER = {
  embedderId: ${JSON.stringify(embedder.id)},${
    embedderSha256
      ? `
  embedderSha256: ${JSON.stringify(embedderSha256)},`
      : ''
  }
  trainedOn: ${JSON.stringify(`test/fixtures/memory-firewall/tuning.jsonl: ${injections} injections, ${facts} facts`)},
  lambda: ${chosen.lambda},
  lexicalBuckets: ${chosen.lexicalBuckets},
  threshold: ${chosen.threshold},
  screensAboutUser: ${chosen.screensAboutUser},
  screensOtherLanguages: ${chosen.screensOtherLanguages},
  bias: ${round(model.bias)},
  weights: [${model.weights.map(round).join(', ')}],
} as const;
`,
);
// Wrapped as the repository formats it, so that training again on the same embedder changes nothing.
execFileSync('npx', ['biome', 'format', '--write', output], { stdio: 'inherit' });
console.log(`wrote ${output}`);
