import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { MarkedText, type Range } from './marked-text.js';

type Chunk = Schemas['Chunk'];
type Document = Schemas['Document'];

/** Every chunk of a document (paged through), or the error that stopped it. */
export async function loadChunks(session: ApiSession, documentId: string): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  let cursor: string | undefined;
  do {
    const { data, error, response } = await session.client.GET('/v1/documents/{id}/chunks', {
      params: { path: { id: documentId }, query: { limit: 500, ...(cursor ? { cursor } : {}) } },
    });
    if (error) throw new Error(describeError(error, response));
    chunks.push(...data.items);
    cursor = data.nextCursor ?? undefined;
  } while (cursor);
  return chunks;
}

interface Props {
  session: ApiSession;
  document: Document;
  /** The chunk to highlight and scroll to (a citation's). */
  chunkId?: string;
  /** Ranges of the document's text to mark in it (a citation's quotes). */
  quotes?: Range[];
}

/** A document's chunks with their heading paths and character ranges; a cited chunk is highlighted. */
export function DocumentChunks({ session, document, chunkId, quotes = [] }: Props) {
  const [chunks, setChunks] = useState<Chunk[] | undefined>(undefined);
  const [error, setError] = useState('');

  useEffect(() => {
    loadChunks(session, document.id).then(setChunks, (err: unknown) => setError(String(err)));
  }, [document.id]);

  // Once rendered, bring the cited chunk into view and give it the focus, for keyboards and screen
  // readers. A layout effect, so that it happens in the same commit as the chunks appear: with a
  // plain effect the chunk was shown, then focused a frame later, and a key pressed in between
  // (or a check, as the browser test's) found the focus still on the citation.
  useLayoutEffect(() => {
    if (!chunks || !chunkId) return;
    const element = window.document.getElementById(`chunk-${chunkId}`);
    element?.scrollIntoView({ block: 'center' });
    element?.focus();
  }, [chunks, chunkId]);

  if (error)
    return (
      <p class="status error" role="alert">
        {error}
      </p>
    );
  if (!chunks) return <p>Loading chunks…</p>;
  return (
    <ol class="chunks" aria-label={`Chunks of ${document.title}`}>
      {chunks.map((chunk) => {
        const cited = chunk.id === chunkId;
        return (
          <li
            key={chunk.id}
            id={`chunk-${chunk.id}`}
            class={cited ? 'chunk cited' : 'chunk'}
            tabIndex={cited ? -1 : undefined}
            aria-current={cited ? 'true' : undefined}
          >
            <div class="chunk-meta">
              <span>#{chunk.index}</span>
              <span class="heading-path">{chunk.headingPath.length ? chunk.headingPath.join(' › ') : '(no heading)'}</span>
              <span>
                characters {chunk.start}–{chunk.end}
              </span>
              <span>{chunk.tokenCount} tokens</span>
              {cited && <strong>cited</strong>}
            </div>
            <p class="chunk-text">
              <MarkedText text={chunk.text} offset={chunk.start} ranges={cited ? quotes : []} />
            </p>
          </li>
        );
      })}
    </ol>
  );
}
