import type { Embedder } from '../../../src/embeddings/embedder.js';
import { StaticEmbedder } from '../../../src/embeddings/static-embedder.js';
import { STATIC_MODEL_FORMAT, type StaticQuantization, type TokenTable } from '../../../src/embeddings/static-model-format.js';
import { decodeWeights, encodeWeights, unscaledRows } from '../../../src/embeddings/static-weights-codec.js';
import type { UseLiteTokenizer, UseLiteVocabulary } from '../../../src/embeddings/use-lite-tokenizer.js';
import { fitTokenVectors, rowsTimesTeacher } from './fit-token-vectors.js';
import { meanCosine } from './mean-cosine.js';
import { TeacherCache } from './teacher-cache.js';
import { type TokenRows, buildTokenRows, sifWeights, tokenizeAll } from './token-rows.js';
import type { TrainingSentences } from './training-sentences.js';
import { type ManifestWithoutFiles, modelFiles, writeStaticModel } from './write-static-model.js';

/** Ids 0–5 of USE lite's vocabulary are <unk>, <s>, </s> and reserved pieces: not in the model. */
const FIRST_PIECE_ID = 6;
/** Train sentences the report's train cosine is measured on (the first of the shuffled sample). */
const TRAIN_COSINE_SAMPLE = 5_000;

export interface TrainParameters {
  seed: number;
  modelId: string;
  /** SIF's a: smaller discounts frequent tokens more. */
  sifA: number;
  ridge: number;
  iterations: number;
  quantization: StaticQuantization;
  maxInputTokens: number;
  /**
   * Each token's starting vector, which the ridge pulls towards: the teacher's vector of the piece
   * alone (`pieces`), or the weighted mean of the teacher's vectors of the sentences holding it
   * (`sentences`; pieces never seen keep their own).
   */
  init: 'pieces' | 'sentences';
  /** Texts per call to the teacher. */
  teacherBatch: number;
}

export interface TrainInput {
  teacher: Embedder;
  tokenizer: UseLiteTokenizer;
  vocabulary: UseLiteVocabulary;
  vocabularySha256: string;
  sentences: TrainingSentences;
  cacheDir: string;
  outputDir: string;
  parameters: TrainParameters;
  log?: (message: string) => void;
}

export interface TrainReport {
  /** Texts the teacher embedded (not found in the cache) and the seconds it took. */
  teacher: { pieces: { texts: number; seconds: number }; sentences: { texts: number; seconds: number } };
  /** Mean cosine to the teacher: E₀ alone (the pieces' own vectors), fitted, fitted and quantised. */
  heldOut: { initial: number; fitted: number; quantized: number };
  train: { initial: number; fitted: number; quantized: number };
  fitSeconds: number;
  weightsBytes: number;
  weightsSha256: string;
}

/**
 * The distillation, step by step: the teacher's vector of every sentence and of every piece alone
 * (cached), the pieces' SIF weights, the least-squares fit of their vectors from the pieces' own
 * (so that a text's weighted mean approximates the teacher's vector of it), quantisation, and the
 * model folder written with its manifest.
 */
export async function trainStaticModel(input: TrainInput): Promise<TrainReport> {
  const { teacher, tokenizer, vocabulary, sentences, parameters: p } = input;
  const log = input.log ?? (() => {});
  const v = vocabulary.length;
  const d = teacher.dimensions;
  const pieceTexts = vocabulary.map(([piece]) => piece.replace(/\u2581/g, ' ').trim());
  const cache = new TeacherCache(input.cacheDir, teacher.id, d);
  try {
    const fill = async (what: string, texts: string[]) => {
      const started = performance.now();
      const filled = await cache.fill(teacher, texts, p.teacherBatch, (done, total) => {
        if (done === total || done % (p.teacherBatch * 20) === 0) {
          log(`teacher, ${what}: ${done}/${total} texts, ${(done / ((performance.now() - started) / 1000)).toFixed(1)}/s`);
        }
      });
      log(`teacher, ${what}: ${filled.embedded} texts embedded in ${filled.seconds.toFixed(1)} s (${texts.length - filled.embedded} cached or repeated)`);
      return { texts: filled.embedded, seconds: round(filled.seconds) };
    };
    const teacherWork = {
      pieces: await fill('pieces', [...pieceTexts.slice(FIRST_PIECE_ID), '']),
      sentences: await fill('sentences', [...sentences.train, ...sentences.heldOut]),
    };

    const tokenLists = tokenizeAll(tokenizer, sentences.train, p.maxInputTokens);
    const { weights } = sifWeights(tokenLists, v, p.sifA, FIRST_PIECE_ID);
    const rows = buildTokenRows(tokenLists, weights);
    const initial = new Float64Array(v * d);
    const vector = new Float32Array(d);
    for (let id = FIRST_PIECE_ID; id < v; id++) {
      cache.read(pieceTexts[id]!, vector);
      initial.set(vector, id * d);
    }
    const fitStarted = performance.now();
    const target = rowsTimesTeacher(rows, v, d, (s, out) => cache.read(sentences.train[s]!, out));
    if (p.init === 'sentences') startFromSentenceMeans(initial, target, rows, d);
    const fitted = fitTokenVectors({
      rows,
      rowsTimesTeacher: target,
      initial,
      vocabularySize: v,
      dimensions: d,
      ridge: p.ridge,
      iterations: p.iterations,
      onIteration: (i, residual) => log(`fit: iteration ${i}/${p.iterations}, relative residual ${residual.toExponential(3)}`),
    });
    const fitSeconds = (performance.now() - fitStarted) / 1000;

    const ids = Array.from({ length: v - FIRST_PIECE_ID }, (_, i) => i + FIRST_PIECE_ID);
    const table: TokenTable = { ids, pieces: ids.map((id) => vocabulary[id]![0]), weights: ids.map((id) => roundWeight(weights[id]!)) };
    const fallback = new Float32Array(d);
    cache.read('', fallback);
    const rowsOf = (vectors: Float64Array) => {
      const out = new Float32Array((ids.length + 1) * d);
      ids.forEach((id, row) => out.set(vectors.subarray(id * d, (id + 1) * d), row * d));
      out.set(fallback, ids.length * d);
      return out;
    };
    const floatRows = rowsOf(fitted);
    const weightsFile = encodeWeights(floatRows, d, p.quantization);
    const manifestBase: ManifestWithoutFiles = {
      format: STATIC_MODEL_FORMAT,
      modelId: p.modelId,
      teacher: teacher.id,
      tokenizer: { name: 'use-lite-sentencepiece', vocabularySha256: input.vocabularySha256 },
      dimensions: d,
      tokens: ids.length,
      maxInputTokens: p.maxInputTokens,
      quantization: p.quantization,
      sources: sentences.sources,
      parameters: {
        ...p,
        trainSentences: sentences.train.length,
        heldOutSentences: sentences.heldOut.length,
        vocabulary: 'the USE lite SentencePiece pieces (ids 6 and up)',
        initialVectors:
          p.init === 'pieces'
            ? "the teacher's vector of each piece's text alone"
            : "the weighted mean of the teacher's vectors of the sentences holding the piece (unseen pieces: the piece's own)",
        weighting: 'SIF a/(a+p(token)) over the training sentences',
        objective: 'least squares with a ridge to the initial vectors, conjugate gradients per dimension',
        pca: "none: 512 dimensions kept, the teacher's own space (see scripts/train-static-embedder.ts)",
        fallback: "the teacher's vector of empty text",
      },
    };
    const draft = modelFiles(manifestBase, table, weightsFile);
    const student = (vectors: Float32Array) => new StaticEmbedder({ manifest: draft.manifest, table, rows: unscaledRows(vectors, d) }, tokenizer);
    const quantizedRows = decodeWeights(weightsFile, ids.length + 1, d, p.quantization);
    const teacherOf = (s: string, out: Float32Array) => cache.read(s, out);
    const trainSample = sentences.train.slice(0, TRAIN_COSINE_SAMPLE);
    const measure = (vectors: Float32Array, set: string[]) => round(meanCosine(student(vectors), set, teacherOf));
    const report: TrainReport = {
      teacher: teacherWork,
      heldOut: {
        initial: measure(rowsOf(initial), sentences.heldOut),
        fitted: measure(floatRows, sentences.heldOut),
        quantized: measure(quantizedRows, sentences.heldOut),
      },
      train: { initial: measure(rowsOf(initial), trainSample), fitted: measure(floatRows, trainSample), quantized: measure(quantizedRows, trainSample) },
      fitSeconds: round(fitSeconds),
      weightsBytes: weightsFile.length,
      weightsSha256: draft.manifest.files.weights.sha256,
    };
    const final = modelFiles({ ...manifestBase, metrics: { meanCosineToTeacher: { heldOut: report.heldOut, trainSample: report.train } } }, table, weightsFile);
    await writeStaticModel(input.outputDir, final, weightsFile);
    return report;
  } finally {
    cache.close();
  }
}

/** initial[t] = Σ a[s][t]·T[s] / Σ a[s][t] for every token of the rows: the mean of the sentences that hold it. */
function startFromSentenceMeans(initial: Float64Array, rowsTimesTeacher: Float64Array, rows: TokenRows, d: number): void {
  const mass = new Float64Array(initial.length / d);
  for (let k = 0; k < rows.ids.length; k++) mass[rows.ids[k]!]! += rows.shares[k]!;
  mass.forEach((m, t) => {
    if (m > 0) for (let j = 0; j < d; j++) initial[t * d + j] = rowsTimesTeacher[t * d + j]! / m;
  });
}

/** Weights are written rounded, so the table is the same text on every machine. */
const roundWeight = (w: number) => Number(w.toPrecision(7));
const round = (x: number) => Math.round(x * 1e4) / 1e4;
