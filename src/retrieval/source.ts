import type { KnowledgeHit } from './knowledge.js';

/**
 * What a chat turn cites: a memory, a document chunk or a past turn, numbered as the model sees it.
 * Shared by the chat, the runs that store a paused turn's sources, and the replies.
 */
export interface MemorySource {
  id: number;
  kind: 'memory';
  key: string;
  agentId: string;
  content: string;
  tags: string[];
  score: number;
  /** Where the memory came from (its origins, `at` as ISO 8601); absent in runs stored before they were kept. */
  sources?: CitedOrigin[];
}

/** A memory's origin as a citation carries it: the turn and words it was drawn from, when a turn wrote it. */
export interface CitedOrigin {
  actor: string;
  conversationId: string | null;
  turn: number | null;
  quote: { text: string; start: number; end: number } | null;
  at: string;
  deleted?: boolean;
}

export interface DocumentSource extends KnowledgeHit {
  id: number;
  kind: 'document';
}

/** A turn of another conversation with the same agent and user (episodic recall). */
export interface TurnSource {
  id: number;
  kind: 'turn';
  conversationId: string;
  turn: number;
  question: string;
  answer: string;
  /** When the question was asked (ISO 8601). */
  at: string;
  score: number;
}

export type Source = MemorySource | DocumentSource | TurnSource;

export function identityOf(source: Source): string {
  switch (source.kind) {
    case 'memory':
      return `m:${source.agentId}:${source.key}`;
    case 'document':
      return `d:${source.documentId}:${source.chunkId}`;
    case 'turn':
      return `t:${source.conversationId}:${source.turn}`;
  }
}

export function sourceText(source: Source): string {
  switch (source.kind) {
    case 'memory':
      return source.content;
    case 'document':
      return source.text;
    case 'turn':
      // Both sides, labelled: what the user said is often what a later question asks about. An
      // imported conversation's opening has only the assistant's side.
      return source.question === '' ? `Assistant: ${source.answer}` : `User: ${source.question}\nAssistant: ${source.answer}`;
  }
}
