import { AutoModelForSequenceClassification, AutoTokenizer, type PreTrainedModel, type Tensor } from '@huggingface/transformers';
import { type TransformersModelSource, detectMaxInputTokens, loadFromSource, sourceName } from '../../embeddings/transformers-loading.js';
import { PairEncoder } from './pair-encoder.js';

export interface CrossEncoderModelOptions extends TransformersModelSource {
  /** Truncate pairs to fewer tokens than the model allows (faster, sees less). Default: the model's limit. */
  maxLength?: number;
  /** ONNX weight variant, e.g. 'fp32' or 'q8' (picks onnx/model.onnx or onnx/model_quantized.onnx). */
  dtype?: 'auto' | 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4';
  /** onnxruntime intra-op threads. Default: onnxruntime's (one per core). */
  threads?: number;
}

/** Scores (query, passage) pairs: higher means more relevant. One model call per `score`. */
export interface CrossEncoderScorer {
  /** `cross-encoder:<model>`. */
  readonly id: string;
  /** Tokens per pair, special tokens included, after which passages (and long queries) are cut. */
  readonly maxLength: number;
  /** How many `score` calls can run at once (worker threads); 1 in the calling thread. */
  readonly parallelism: number;
  /** A call already running is not interrupted by the signal; one still waiting is dropped. */
  score(query: string, passages: readonly string[], options?: { signal?: AbortSignal }): Promise<number[]>;
  close(): Promise<void>;
}

// Label names that mean "relevant" in two-label heads; any other two-label model is read as
// [irrelevant, relevant], the order Hugging Face's classification cross-encoders use.
const POSITIVE_LABEL = /^(label_1|1|pos|positive|relevant|true|yes|entailment)$/i;

/**
 * A sequence-classification cross-encoder (ms-marco-MiniLM, bge-reranker...) run by
 * transformers.js in the calling thread. onnxruntime-node runs a session synchronously, so each
 * `score` call holds this thread for one batch: run it in a worker (CrossEncoderWorkers) where
 * requests are being served.
 */
export class CrossEncoderModel implements CrossEncoderScorer {
  readonly parallelism = 1;
  private closed = false;

  private constructor(
    readonly id: string,
    private readonly encoder: PairEncoder,
    private readonly model: PreTrainedModel,
    /** Which logit is the relevance score: a single-logit head's only one, or the positive class. */
    private readonly positive: number,
    private readonly labels: number,
  ) {}

  get maxLength(): number {
    return this.encoder.maxLength;
  }

  static async load(options: CrossEncoderModelOptions): Promise<CrossEncoderModel> {
    const { tokenizer, model } = await loadFromSource(options, async (modelPath, source) => {
      const tokenizer = await AutoTokenizer.from_pretrained(modelPath, source);
      const model = await AutoModelForSequenceClassification.from_pretrained(modelPath, {
        ...source,
        ...(options.dtype ? { dtype: options.dtype } : {}),
        ...(options.threads ? { session_options: { intraOpNumThreads: options.threads } } : {}),
      });
      return { tokenizer, model };
    });
    try {
      const limit = detectMaxInputTokens(tokenizer, model.config);
      const encoder = new PairEncoder(tokenizer, Math.min(limit, options.maxLength ?? limit));
      // The head's width is read off a probe rather than the config, whose label fields are
      // optional and default differently across exporters; a wrong model fails here, at start.
      const labels = (await runLogits(model, encoder, 'probe', ['probe'])).dims[1]!;
      if (labels !== 1 && labels !== 2) {
        throw new Error(`${options.model} has ${labels} labels; a cross-encoder reranker has one relevance logit or two labels`);
      }
      return new CrossEncoderModel(`cross-encoder:${sourceName(options)}`, encoder, model, labels === 2 ? positiveLabel(model.config) : 0, labels);
    } catch (error) {
      await model.dispose();
      throw error;
    }
  }

  async score(query: string, passages: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[]> {
    if (this.closed) throw new Error('CrossEncoderModel is closed');
    options.signal?.throwIfAborted();
    if (passages.length === 0) return [];
    const logits = await runLogits(this.model, this.encoder, query, passages);
    if (logits.dims[1] !== this.labels) throw new Error(`${this.id}: expected ${this.labels} logits per pair, got ${logits.dims[1]}`);
    const data = logits.data as Float32Array;
    return passages.map((_, row) => {
      const at = row * this.labels;
      // Two labels: the positive class's log-odds, a monotone transform of its softmax
      // probability that does not saturate at 1 and so still tells strong matches apart.
      return this.labels === 1 ? data[at]! : data[at + this.positive]! - data[at + 1 - this.positive]!;
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.model.dispose();
  }
}

export function createCrossEncoderModel(options: CrossEncoderModelOptions): Promise<CrossEncoderModel> {
  return CrossEncoderModel.load(options);
}

async function runLogits(model: PreTrainedModel, encoder: PairEncoder, query: string, passages: readonly string[]): Promise<Tensor> {
  const queryTokens = encoder.tokenize(query);
  const inputs = encoder.batch(passages.map((p) => encoder.encode(queryTokens, encoder.tokenize(p))));
  const { logits } = (await model(inputs)) as { logits?: Tensor };
  if (logits?.dims.length !== 2 || logits.dims[0] !== passages.length) {
    throw new Error(`expected logits of shape [${passages.length}, labels], got ${logits ? `[${logits.dims.join(', ')}]` : 'no logits'}`);
  }
  return logits;
}

function positiveLabel(config: object): number {
  const { id2label } = config as { id2label?: Record<string, string> };
  const named = Object.entries(id2label ?? {}).find(([, label]) => POSITIVE_LABEL.test(label));
  return named ? Number(named[0]) : 1;
}
