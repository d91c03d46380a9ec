import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { type CitedSource, sourceLabel } from './cited-answer.js';
import { DocumentChunks } from './document-chunks.js';
import { hrefOf } from './hash-route.js';
import { formatRanges } from './marked-text.js';
import { ModalDialog } from './modal-dialog.js';

/** A cited source, opened: the memory itself, or the document with the cited chunk highlighted and its quotes marked. */
export function CitationDialog({ session, source, onClose }: { session: ApiSession; source: CitedSource; onClose: () => void }) {
  return (
    <ModalDialog title={`[${source.id}] ${sourceLabel(source)}`} onClose={onClose}>
      {source.kind === 'memory' && <CitedMemory session={session} agentId={source.agentId} memoryKey={source.key} />}
      {source.kind === 'document' && <CitedDocument session={session} source={source} />}
      {source.kind === 'turn' && <p>{'snippet' in source ? source.snippet : `${source.question} → ${source.answer}`}</p>}
    </ModalDialog>
  );
}

function CitedMemory({ session, agentId, memoryKey }: { session: ApiSession; agentId: string; memoryKey: string }) {
  const [memory, setMemory] = useState<Schemas['Memory'] | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    void session.client.GET('/v1/memories/{key}', { params: { path: { key: memoryKey }, query: { agentId } } }).then(({ data, error: failed, response }) => {
      if (failed) setError(describeError(failed, response));
      else setMemory(data.memory);
    });
  }, [memoryKey, agentId]);
  if (error)
    return (
      <p class="status error" role="alert">
        {error}
      </p>
    );
  if (!memory) return <p>Loading the memory…</p>;
  return (
    <div class="cited-memory">
      <blockquote>{memory.content}</blockquote>
      <p>Tags: {memory.tags.join(', ') || 'none'}</p>
      <a href={hrefOf('memories', { key: memory.key })}>Open in Memories</a>
    </div>
  );
}

function CitedDocument({ session, source }: { session: ApiSession; source: Extract<CitedSource, { kind: 'document' }> }) {
  const [document, setDocument] = useState<Schemas['Document'] | undefined>(undefined);
  const [error, setError] = useState('');
  const quotes = 'quotes' in source && source.quotes ? source.quotes : [];
  useEffect(() => {
    void session.client.GET('/v1/documents/{id}', { params: { path: { id: source.documentId } } }).then(({ data, error: failed, response }) => {
      if (failed) setError(describeError(failed, response));
      else setDocument(data.document);
    });
  }, [source.documentId]);
  if (error)
    return (
      <p class="status error" role="alert">
        {error}
      </p>
    );
  if (!document) return <p>Loading the document…</p>;
  return (
    <div class="cited-document">
      <p>
        Characters {source.start}–{source.end} of {document.title}.{' '}
        <a href={hrefOf('documents', { doc: source.documentId, chunk: source.chunkId, ...(quotes.length ? { quotes: formatRanges(quotes) } : {}) })}>
          Open in Documents
        </a>
      </p>
      <DocumentChunks session={session} document={document} chunkId={source.chunkId} quotes={quotes} />
    </div>
  );
}
