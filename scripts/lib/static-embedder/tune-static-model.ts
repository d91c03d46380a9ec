import { type StaticModel, readStaticModel } from '../../../src/embeddings/static-model-files.js';
import { decodeWeights, dequantizeRows, encodeWeights } from '../../../src/embeddings/static-weights-codec.js';
import type { UseLiteTokenizer } from '../../../src/embeddings/use-lite-tokenizer.js';
import { type ContrastiveParameters, type TokenPair, type WeightedTokens, dot, meanVector, tuneContrastively } from './contrastive-stage.js';
import type { PairSource } from './contrastive-pairs.js';
import { seededRandom, shuffleInPlace } from './seeded-random.js';
import { modelFiles, writeStaticModel } from './write-static-model.js';

/** Pairs kept out of the tuning, to measure it: about 2%, at most this many. */
const HELD_OUT_PAIRS = 2_000;
/** The held-out measure ranks each pair's partner among this many (its own and the next ones'). */
const RANKING_POOL = 100;

export interface TuneInput {
  /** The distilled model's folder: where the tuning starts. */
  fromDirectory: string;
  outputDirectory: string;
  modelId: string;
  tokenizer: UseLiteTokenizer;
  sources: PairSource[];
  parameters: ContrastiveParameters;
  log?: (message: string) => void;
}

export interface TuneReport {
  pairs: { train: number; heldOut: number };
  /** Held-out pairs whose partner ranks first among RANKING_POOL passages: before, after, after quantisation. */
  heldOutTop1: { before: number; tuned: number; quantized: number };
  seconds: number;
  weightsSha256: string;
}

/**
 * The static model's second stage (contrastive-stage.ts), from a distilled model's folder to a new
 * one: the pairs of every source tokenized as the runtime reads them (its first maxInputTokens,
 * its weights), a held-out sample set apart, the rows tuned, quantised as the start was, written
 * with a manifest that names the start and the stage's parameters.
 */
export async function tuneStaticModel(input: TuneInput): Promise<TuneReport> {
  const log = input.log ?? (() => {});
  const start = await readStaticModel(input.fromDirectory);
  const { manifest, table } = start;
  const d = manifest.dimensions;
  const tokensOf = weightedTokenizer(start, input.tokenizer);
  const random = seededRandom(input.parameters.seed);
  const sourceCounts: { name: string; pairs: number }[] = [];
  const all: TokenPair[] = [];
  for (const source of input.sources) {
    const pairs = await source.read(random);
    sourceCounts.push({ name: source.name, pairs: pairs.length });
    for (const [a, b] of pairs) all.push([tokensOf(a), tokensOf(b)]);
  }
  shuffleInPlace(all, random);
  const heldOutCount = Math.min(HELD_OUT_PAIRS, Math.floor(all.length * 0.02));
  const heldOut = all.slice(0, heldOutCount);
  const train = all.slice(heldOutCount);
  log(`tune: ${train.length} pairs, ${heldOut.length} held out; ${sourceCounts.map((s) => `${s.name} ${s.pairs}`).join(', ')}`);

  const tableRows = table.ids.length;
  // Tuned in place: the table's rows, with the fallback row after them left as it was.
  const withFallback = dequantizeRows(start.rows, d);
  const rows = withFallback.subarray(0, tableRows * d);
  const before = top1(rows, d, heldOut);
  const started = performance.now();
  let lossSum = 0;
  tuneContrastively({
    rows,
    dimensions: d,
    pairs: train,
    parameters: input.parameters,
    onStep: (step, loss) => {
      lossSum += loss;
      if (step % 100 === 0) {
        log(`tune: step ${step}/${input.parameters.steps}, loss ${(lossSum / 100).toFixed(4)}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
        lossSum = 0;
      }
    },
  });
  const seconds = (performance.now() - started) / 1000;
  const tuned = top1(rows, d, heldOut);

  const weights = encodeWeights(withFallback, d, manifest.quantization);
  const quantized = top1(decodeWeights(weights, tableRows + 1, d, manifest.quantization).subarray(0, tableRows * d), d, heldOut);
  const { files: _files, metrics: _metrics, ...base } = manifest;
  const heldOutTop1 = { before: round(before), tuned: round(tuned), quantized: round(quantized) };
  const files = modelFiles(
    {
      ...base,
      modelId: input.modelId,
      parameters: {
        ...manifest.parameters,
        modelId: input.modelId,
        stages: [
          { stage: 'distillation', modelId: manifest.modelId, weightsSha256: manifest.files.weights.sha256 },
          {
            stage: 'contrastive',
            ...input.parameters,
            pairSources: sourceCounts,
            objective: 'in-batch softmax over cosines times scale, both directions, Adam on the rows a batch touches',
          },
        ],
      },
      // The start's figures are its own (the tuning moves the vectors away from the teacher): kept under its stage's name.
      metrics: { distillation: manifest.metrics ?? {}, contrastiveHeldOutTop1: { ...heldOutTop1, pool: RANKING_POOL, pairs: heldOut.length } },
    },
    table,
    weights,
  );
  await writeStaticModel(input.outputDirectory, files, weights);
  return {
    pairs: { train: train.length, heldOut: heldOut.length },
    heldOutTop1,
    seconds: round(seconds),
    weightsSha256: files.manifest.files.weights.sha256,
  };
}

/** A text's tokens as the runtime counts them: the first maxInputTokens, weight-0 and unknown ones left out. */
function weightedTokenizer(model: StaticModel, tokenizer: UseLiteTokenizer): (text: string) => WeightedTokens {
  const rowOf = new Map<number, number>();
  model.table.ids.forEach((id, row) => {
    if (model.table.weights[row]! > 0) rowOf.set(id, row);
  });
  return (text) => {
    const rows: number[] = [];
    const weights: number[] = [];
    for (const id of tokenizer.encode(text).slice(0, model.manifest.maxInputTokens)) {
      const row = rowOf.get(id);
      if (row !== undefined) rows.push(row), weights.push(model.table.weights[row]!);
    }
    return { rows: Int32Array.from(rows), weights: Float32Array.from(weights) };
  };
}

/** Share of pairs whose second text is the nearest to the first among it and the next RANKING_POOL − 1 pairs' second texts. */
function top1(rows: Float32Array, d: number, pairs: TokenPair[]): number {
  if (pairs.length < 2) return 0;
  const left = new Float32Array(pairs.length * d);
  const right = new Float32Array(pairs.length * d);
  pairs.forEach(([a, b], i) => {
    meanVector(rows, d, a, left, i * d);
    meanVector(rows, d, b, right, i * d);
  });
  const pool = Math.min(RANKING_POOL, pairs.length);
  let hits = 0;
  for (let i = 0; i < pairs.length; i++) {
    const own = dot(left, i * d, right, i * d, d);
    let first = true;
    for (let k = 1; k < pool && first; k++) if (dot(left, i * d, right, ((i + k) % pairs.length) * d, d) >= own) first = false;
    if (first) hits += 1;
  }
  return hits / pairs.length;
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;
