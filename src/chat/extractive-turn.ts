import type { ImagePart } from '../llm/messages.js';
import type { Source } from '../retrieval/source.js';
import type { RunStore } from '../runs/run-types.js';
import type { Embedder } from '../embeddings/embedder.js';
import type { ChatEvent, ChatReply, TurnReply } from './chat-reply.js';
import type { ConversationTurn } from './conversation-turn.js';
import { extractiveReply } from './extractive/extractive-reply.js';

/** A turn no model answers, its sources already recalled. */
export interface ExtractiveTurn {
  message: string;
  /** The message's images, stored with it (no model looks at them). */
  images?: ImagePart[];
  runId: string;
  conversationId: string;
  agentId: string;
  userId: string | null;
  agentVersion: number | null;
  recalled: Source[];
  /** The question's embedding, started before recall so that both run at once. */
  questionVector: Promise<number[]> | undefined;
  stored: ConversationTurn | undefined;
  threadKeyOf?: ((reply: TurnReply) => string | undefined) | undefined;
  signal: AbortSignal | undefined;
}

/**
 * The turn's extractive reply, stored in its conversation and recorded as a completed run. There
 * is no live run to cancel, so the run is recorded once the reply is whole.
 */
export async function runExtractiveTurn(
  turn: ExtractiveTurn,
  emit: (event: ChatEvent) => void,
  deps: { runs: RunStore; embedder: Pick<Embedder, 'embed'> | undefined },
): Promise<ChatReply> {
  const { message, runId, conversationId, agentId, userId, agentVersion } = turn;
  const reply = await extractiveReply({ message, runId, conversationId, sources: turn.recalled }, emit, {
    embedder: deps.embedder,
    questionVector: turn.questionVector,
    userId,
    signal: turn.signal,
  });
  await turn.stored?.finish([
    {
      message: { role: 'user', content: message, ...(turn.images?.length ? { images: turn.images } : {}) },
      metadata: agentVersion === null ? { runId } : { runId, agentVersion },
    },
    { message: { role: 'assistant', content: reply.answer, toolCalls: [] }, metadata: { citations: reply.citations, mode: reply.mode } },
  ]);
  const threadKey = turn.threadKeyOf?.(reply);
  await deps.runs.create({
    id: runId,
    agentId,
    userId,
    conversationId,
    agentVersion,
    status: 'completed',
    stopReason: 'completed',
    ...(threadKey !== undefined ? { threadKey } : {}),
  });
  emit({ type: 'done', reply });
  return reply;
}
