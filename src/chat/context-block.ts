import type { MemoryStore } from '../memory/memory-types.js';
import type { KnowledgeRetriever } from './knowledge-retriever.js';
import { type Source, type SourceList, sourceText } from './sources.js';

export interface TagFilters {
  tagsAny?: readonly string[];
  tagsAll?: readonly string[];
  tagsNone?: readonly string[];
}

export interface RecallOptions extends TagFilters {
  query: string;
  agentId: string;
  /** Per kind: up to `topK` memories and up to `topK` document chunks. */
  topK: number;
  /** Document candidates fetched before fusion and reranking cut them to `topK`. */
  candidateK?: number | undefined;
  memories: MemoryStore;
  knowledge?: KnowledgeRetriever | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * Recalls memories and document chunks for the question and numbers them in `sources`. Both
 * lookups run together: they hit different indexes and the turn waits on the slower one anyway.
 */
export async function recallSources(sources: SourceList, options: RecallOptions): Promise<Source[]> {
  const { query, agentId, topK, candidateK, memories, knowledge, signal, tagsAny, tagsAll, tagsNone } = options;
  const tags = { tagsAny, tagsAll, tagsNone };
  // A negative cosine means the memory is about something else; it would only crowd the prompt.
  const [memoryHits, knowledgeHits] = await Promise.all([
    memories.search(query, { agentId, topK, minScore: 0, ...tags }),
    knowledge ? knowledge.search(query, { topK, signal, ...definedOnly({ ...tags, candidateK }) }) : Promise.resolve([]),
  ]);
  signal?.throwIfAborted();
  const added: Source[] = [];
  for (const hit of memoryHits) added.push(sources.addMemory(hit));
  for (const hit of knowledgeHits) added.push(sources.addDocument(hit));
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
  } else {
    attributes.push(['title', source.title]);
    if (source.headingPath.length > 0) attributes.push(['section', source.headingPath.join(' > ')]);
  }
  const open = attributes.map(([name, value]) => `${name}="${escapeAttribute(value)}"`).join(' ');
  return `<source ${open}>\n${escapeSourceText(sourceText(source))}\n</source>`;
}

/** The sources as one delimited block; an empty block says so rather than vanishing. */
export function renderSourcesBlock(sources: readonly Source[]): string {
  if (sources.length === 0) return '<sources>\n(no matching sources)\n</sources>';
  return `<sources>\n${sources.map(renderSource).join('\n')}\n</sources>`;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
