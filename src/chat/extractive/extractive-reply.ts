import type { Embedder } from '../../embeddings/embedder.js';
import type { ChatEvent, ChatReply } from '../chat-reply.js';
import { toCitation } from '../citations.js';
import { numberedAsCited } from '../sources.js';
import type { Source } from '../../retrieval/source.js';
import { type ExtractiveOptions, NO_LLM_NOTE, extractiveAnswer } from './extractive-answer.js';

/**
 * A turn's reply without a model: sentences quoted from the recalled sources, each cited. Emits
 * the turn's `retrieval` too: the sources are numbered as the answer cites them, so that each [n]
 * means one source in the answer, its citations and the streamed sources alike.
 */
export async function extractiveReply(
  turn: { message: string; runId: string; conversationId: string; sources: Source[] },
  emit: (event: ChatEvent) => void,
  options: Pick<ExtractiveOptions, 'embedder' | 'questionVector' | 'userId' | 'signal'>,
): Promise<ChatReply> {
  const { message, sources, runId, conversationId } = turn;
  const { answer, citedIds, quotes } = await extractiveAnswer(message, sources, options);
  const numbered = numberedAsCited(sources, citedIds);
  emit({ type: 'retrieval', runId, conversationId, sources: numbered });
  // One delta, so a streaming client renders both modes with the same code.
  emit({ type: 'delta', text: answer });
  return {
    runId,
    status: 'completed',
    conversationId,
    answer,
    // From the ids picked, not by parsing the answer: source text may itself contain "[2]".
    citations: numbered.slice(0, citedIds.length).map((source, i) => {
      const citation = toCitation(source);
      const quoted = quotes.get(citedIds[i]!);
      return citation.kind === 'document' && quoted ? { ...citation, quotes: quoted } : citation;
    }),
    toolCalls: [],
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    costUsd: null,
    stopReason: 'completed',
    mode: 'extractive',
    note: NO_LLM_NOTE,
  };
}

/**
 * The question's vector, computed beside retrieval rather than after it; undefined when there is
 * no embedder. A failure is the answer's to handle.
 */
export function embedQuestion(embedder: Pick<Embedder, 'embed'> | undefined, message: string, signal: AbortSignal | undefined): Promise<number[]> | undefined {
  if (!embedder) return undefined;
  const vector = embedder.embed([message], signal ? { signal } : undefined).then(([v]) => v!);
  // Handled where it is awaited; a turn that fails before then must not leave it unhandled.
  vector.catch(() => {});
  return vector;
}
