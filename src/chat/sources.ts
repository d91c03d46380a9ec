import type { TurnHit } from '../conversations/turn-search.js';
import type { MemoryHit } from '../memory/memory-types.js';
import type { KnowledgeHit } from '../retrieval/knowledge.js';
import { type DocumentSource, type MemorySource, type Source, type TurnSource, identityOf } from '../retrieval/source.js';

/**
 * The numbered sources of one turn. Numbers are handed out once and never reused, so a [n] the
 * model wrote early still means the same thing after tools added more; a source found twice keeps
 * its first number, so the model does not see one fact under two ids.
 */
export class SourceList {
  private readonly byIdentity = new Map<string, Source>();
  private readonly ordered: Source[] = [];

  addMemory(hit: MemoryHit): MemorySource {
    const { memory } = hit;
    const existing = this.byIdentity.get(`m:${memory.agentId}:${memory.key}`);
    if (existing?.kind === 'memory') return existing;
    return this.push(`m:${memory.agentId}:${memory.key}`, {
      id: 0,
      kind: 'memory',
      key: memory.key,
      agentId: memory.agentId,
      content: memory.content,
      tags: memory.tags,
      score: hit.score,
      sources: memory.sources.map((o) => ({ ...o, at: o.at.toISOString() })),
    });
  }

  addDocument(hit: KnowledgeHit): DocumentSource {
    const identity = `d:${hit.documentId}:${hit.chunkId}`;
    const existing = this.byIdentity.get(identity);
    if (existing?.kind === 'document') return existing;
    return this.push(identity, {
      id: 0,
      kind: 'document',
      documentId: hit.documentId,
      title: hit.title,
      chunkId: hit.chunkId,
      headingPath: hit.headingPath,
      start: hit.start,
      end: hit.end,
      text: hit.text,
      score: hit.score,
      ...(hit.passage ? { passage: hit.passage } : {}),
    });
  }

  addTurn(hit: TurnHit): TurnSource {
    const identity = `t:${hit.conversationId}:${hit.turn}`;
    const existing = this.byIdentity.get(identity);
    if (existing?.kind === 'turn') return existing;
    return this.push(identity, {
      id: 0,
      kind: 'turn',
      conversationId: hit.conversationId,
      turn: hit.turn,
      question: hit.question,
      answer: hit.answer,
      at: hit.at.toISOString(),
      score: hit.score,
    });
  }

  /** The list a paused run had, numbers and all, from its stored state. */
  static from(sources: readonly Source[]): SourceList {
    const list = new SourceList();
    for (const source of [...sources].sort((a, b) => a.id - b.id)) list.push(identityOf(source), { ...source });
    return list;
  }

  get(id: number): Source | undefined {
    return this.ordered[id - 1];
  }

  all(): Source[] {
    return [...this.ordered];
  }

  private push<S extends Source>(identity: string, source: S): S {
    source.id = this.ordered.length + 1;
    this.ordered.push(source);
    this.byIdentity.set(identity, source);
    return source;
  }
}

/**
 * The sources numbered as an answer without a model cites them: the cited first, in the order
 * it cites them (its [n] is the n-th of `citedIds`), then the rest in recall order. Copies: the
 * numbers are the reply's, not the list's.
 */
export function numberedAsCited(sources: readonly Source[], citedIds: readonly number[]): Source[] {
  const byId = new Map(sources.map((s) => [s.id, s]));
  const cited = citedIds.flatMap((id) => byId.get(id) ?? []);
  const rest = sources.filter((s) => !citedIds.includes(s.id));
  return [...cited, ...rest].map((source, i) => ({ ...source, id: i + 1 }));
}
