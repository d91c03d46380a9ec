import type { AgentSettings } from '../agents/agent-config.js';
import type { CompactionSettings } from '../compaction/compaction-config.js';
import type { RecallOptions, TagFilters } from './context-block.js';
import { CHAT_TOP_K_DEFAULT, sourcesFor } from './window-fit.js';

/** What a turn recalls before it answers: how many of each corpus, and under which tag filters. */
export interface RecallPlan {
  /** The tag filters the turn's recall and its tools search under. */
  filters: TagFilters;
  limits: Pick<RecallOptions, 'memoryTopK' | 'knowledgeTopK' | 'candidateK' | 'reranker' | 'turnTopK'>;
}

/**
 * A request's own `topK`, `candidateK` and tag filters win over the agent's `recall` settings.
 * `window` is the model's compaction when a model answers: the defaults (the agent's or the
 * chat's) shrink to what a small window affords, a topK the request names is kept as given.
 */
export function planRecall(
  request: TagFilters & { topK?: number; candidateK?: number },
  recall: AgentSettings['recall'],
  window: CompactionSettings | undefined,
): RecallPlan {
  const affordable = (k: number) => (window ? sourcesFor(window, k) : k);
  const topK = request.topK ?? affordable(CHAT_TOP_K_DEFAULT);
  return {
    filters: {
      tagsAny: request.tagsAny ?? recall?.tagsAny,
      tagsAll: request.tagsAll ?? recall?.tagsAll,
      tagsNone: request.tagsNone ?? recall?.tagsNone,
    },
    limits: {
      memoryTopK: request.topK ?? (recall?.memoryTopK !== undefined ? affordable(recall.memoryTopK) : topK),
      knowledgeTopK: request.topK ?? (recall?.knowledgeTopK !== undefined ? affordable(recall.knowledgeTopK) : topK),
      candidateK: request.candidateK ?? recall?.candidateK,
      reranker: recall?.reranker,
      ...(recall?.turnTopK !== undefined ? { turnTopK: recall.turnTopK } : {}),
    },
  };
}
