import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { type CitedSource, sourceLabel } from './cited-answer.js';
import { DocumentChunks } from './document-chunks.js';
import { hrefOf, turnHref } from './hash-route.js';
import { formatRanges } from './marked-text.js';
import { lookUpMemory } from './memory-lookup.js';
import { MemoryOrigins } from './memory-origins.js';
import { ModalDialog } from './modal-dialog.js';
import { describeValidTime } from './valid-time.js';

/**
 * A cited source, opened: the memory itself with where it came from, the document with the cited
 * chunk highlighted and its quotes marked, or the turn with a link to its conversation.
 */
export function CitationDialog({ session, source, userId, onClose }: { session: ApiSession; source: CitedSource; userId?: string; onClose: () => void }) {
  return (
    <ModalDialog title={`[${source.id}] ${sourceLabel(source)}`} onClose={onClose}>
      {source.kind === 'memory' && <CitedMemory session={session} source={source} {...(userId ? { userId } : {})} />}
      {source.kind === 'document' && <CitedDocument session={session} source={source} />}
      {source.kind === 'turn' && (
        <>
          <p>{'snippet' in source ? source.snippet : `${source.question} → ${source.answer}`}</p>
          <a href={turnHref(source.conversationId, source.turn)}>Open turn {source.turn} of that conversation</a>
        </>
      )}
    </ModalDialog>
  );
}

/** `userId`: the conversation's user, whose memory of that key the citation is before a shared one. */
function CitedMemory({ session, source, userId }: { session: ApiSession; source: Extract<CitedSource, { kind: 'memory' }>; userId?: string }) {
  const [memory, setMemory] = useState<Schemas['Memory'] | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    void lookUpMemory(session, source.key, source.agentId, userId).then((found) => {
      if ('error' in found) setError(found.error);
      else setMemory(found.memory);
    });
  }, [source.key, source.agentId, userId]);
  // The citation's origins are those the memory had when it was cited; the memory's own where the citation carries none.
  const cited = source.sources ?? [];
  const origins = cited.length > 0 || !memory ? cited : memory.sources;
  const validTime = memory && describeValidTime(memory);
  return (
    <div class="cited-memory">
      {error ? (
        <p class="status error" role="alert">
          {error}
        </p>
      ) : memory ? (
        <>
          <blockquote>{memory.content}</blockquote>
          <p>Tags: {memory.tags.join(', ') || 'none'}</p>
          {validTime && <p>{validTime}</p>}
        </>
      ) : (
        <p>Loading the memory…</p>
      )}
      {(memory || cited.length > 0) && (
        <section aria-labelledby="cited-memory-origins">
          <h3 id="cited-memory-origins">Where this comes from</h3>
          <MemoryOrigins origins={origins} />
        </section>
      )}
      <a href={hrefOf('memories', { key: source.key, ...(memory?.userId ? { user: memory.userId } : {}) })}>Open in Memories</a>
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
