import type { TurnSearch } from '../conversations/turn-search.js';
import type { RerankerChoice } from '../retrieval/rerank/reranker-choice.js';
import type { MemoryFilter, MemoryStore } from '../memory/memory-types.js';
import { dateInWords } from '../text/date-in-words.js';
import { definedOnly } from '../util/defined-only.js';
import type { KnowledgeRetriever } from '../retrieval/knowledge.js';
import { type Source, sourceText } from '../retrieval/source.js';
import type { SourceList } from './sources.js';

/** Past turns recalled per chat turn: a few, beside the memories and documents, not instead of them. */
export const TURN_RECALL_TOP_K = 3;

/**
 * The memories a turn reads and searches: with a user, theirs and the agent's shared ones; without
 * one, the shared ones only (the store reads `userId: ''` as those).
 */
export function memoryScope(agentId: string, userId: string | null | undefined): Pick<MemoryFilter, 'agentId' | 'userId' | 'includeShared'> {
  return { agentId, userId: userId ?? '', includeShared: true };
}

export interface TagFilters {
  tagsAny?: readonly string[];
  tagsAll?: readonly string[];
  tagsNone?: readonly string[];
}

export interface RecallOptions extends TagFilters {
  query: string;
  agentId: string;
  /** The turn's user; null or absent when the chat named none. */
  userId?: string | null;
  /** Up to this many memories (0: none). */
  memoryTopK: number;
  /** Up to this many document chunks (0: none). */
  knowledgeTopK: number;
  /** Document candidates fetched before fusion and reranking cut them to `knowledgeTopK`. */
  candidateK?: number;
  /** The documents' reranker; the retriever's default when absent. */
  reranker?: RerankerChoice;
  /** Recall each document hit's whole passage (for an answer without a model). */
  passages?: boolean;
  memories: MemoryStore;
  knowledge?: KnowledgeRetriever;
  /**
   * Past turns of the agent's conversations with the same user but `conversationId` (this one's,
   * which are its history); none recalled when undefined. A conversation whose id was drawn for
   * this turn has nothing stored under it to leave out: without an id its search shares one
   * statement per user, where each new id made a statement of its own.
   */
  turns?: { search: TurnSearch; conversationId?: string };
  /** Up to this many past turns (0: none); TURN_RECALL_TOP_K when absent. */
  turnTopK?: number;
  signal?: AbortSignal;
}

/**
 * Recalls memories, document chunks and past turns for the question and numbers them in
 * `sources`, in that order. The lookups run together: they hit different indexes and the turn
 * waits on the slowest anyway.
 */
export async function recallSources(sources: SourceList, options: RecallOptions): Promise<Source[]> {
  const { query, agentId, userId, memoryTopK, knowledgeTopK, candidateK, reranker, passages, memories, knowledge, turns, signal, tagsAny, tagsAll, tagsNone } =
    options;
  const turnTopK = options.turnTopK ?? TURN_RECALL_TOP_K;
  const tags = { tagsAny, tagsAll, tagsNone };
  // A negative cosine means the memory is about something else; it would only crowd the prompt.
  const [memoryHits, knowledgeHits, turnHits] = await Promise.all([
    memoryTopK > 0 ? memories.search(query, { ...memoryScope(agentId, userId), topK: memoryTopK, minScore: 0, ...tags }) : Promise.resolve([]),
    knowledge && knowledgeTopK > 0
      ? knowledge.search(query, { topK: knowledgeTopK, signal, ...definedOnly({ ...tags, candidateK, reranker, passages }) })
      : Promise.resolve([]),
    // Turns have no tags: the request's tag filters are not theirs to apply.
    turns && turnTopK > 0
      ? turns.search
          .search(query, {
            agentId,
            userId: userId ?? '',
            ...(turns.conversationId !== undefined ? { excludeConversationId: turns.conversationId } : {}),
            topK: turnTopK,
            mode: 'hybrid',
            minScore: 0,
            signal,
          })
          .then((r) => r.hits)
      : Promise.resolve([]),
  ]);
  signal?.throwIfAborted();
  const added: Source[] = [];
  for (const hit of memoryHits) added.push(sources.addMemory(hit));
  for (const hit of knowledgeHits) added.push(sources.addDocument(hit));
  for (const hit of turnHits) added.push(sources.addTurn(hit));
  return added;
}

/**
 * Source text is untrusted: a memory or document could contain `</source>` or `</sources>` and
 * then "instructions". Escaping the three markup characters means no source can end its own
 * element or the block, so everything inside stays data however it is phrased.
 */
export function escapeSourceText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(value: string): string {
  // Newlines too: an attribute spanning lines is easy for a model to misread as content.
  return escapeSourceText(value).replace(/"/g, '&quot;').replace(/\r?\n/g, ' ');
}

export function renderSource(source: Source): string {
  const attributes: [string, string][] = [
    ['id', String(source.id)],
    ['kind', source.kind],
  ];
  if (source.kind === 'memory') {
    attributes.push(['key', source.key]);
    if (source.tags.length > 0) attributes.push(['tags', source.tags.join(', ')]);
  } else if (source.kind === 'document') {
    attributes.push(['title', source.title]);
    if (source.headingPath.length > 0) attributes.push(['section', source.headingPath.join(' > ')]);
  } else {
    // The date lets the model answer "when did I say…", and tells it how old the turn is.
    attributes.push(['conversation', source.conversationId], ['turn', String(source.turn)], ['date', dateInWords(new Date(source.at))]);
  }
  const open = attributes.map(([name, value]) => `${name}="${escapeAttribute(value)}"`).join(' ');
  return `<source ${open}>\n${escapeSourceText(sourceText(source))}\n</source>`;
}

/** The sources as one delimited block; an empty block says so rather than vanishing. */
export function renderSourcesBlock(sources: readonly Source[]): string {
  if (sources.length === 0) return '<sources>\n(no matching sources)\n</sources>';
  return `<sources>\n${sources.map(renderSource).join('\n')}\n</sources>`;
}
