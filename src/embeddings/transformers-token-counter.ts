import { AutoTokenizer } from '@huggingface/transformers';
import { type TransformersModelSource, loadFromSource } from './transformers-loading.js';

/**
 * The model's tokenizer alone (no weights), so a thread that only dispatches to embedding workers
 * can still count tokens exactly for chunking. Counts include the special tokens ([CLS], [SEP])
 * the model's input limit includes too.
 */
export async function loadTransformersTokenCounter(source: TransformersModelSource): Promise<(text: string) => number> {
  const tokenizer = await loadFromSource(source, (modelPath, options) => AutoTokenizer.from_pretrained(modelPath, options));
  return (text: string) => tokenizer.encode(text).length;
}
