import type { Schemas } from '../../client/memrag-client.js';
import { turnHref } from './hash-route.js';
import { longDate } from './long-date.js';

/**
 * One origin of a memory (its provenance), as memories and the chat's memory citations carry
 * them in `sources`: who wrote it, and when a chat turn did, that turn and the user's words.
 */
export type MemoryOrigin = Schemas['MemoryOrigin'];

/** Who wrote it and how, before the date: "You told me this", "Saved through the API". */
function whoWrote(origin: MemoryOrigin): string {
  switch (origin.actor) {
    case 'extraction':
      return origin.conversationId ? 'You told me this' : 'Drawn from text sent through the API';
    case 'tool':
      return 'Saved by the assistant';
    case 'api':
      return 'Saved through the API';
    case 'system':
      return 'Recorded by memrag';
  }
}

/** One origin in words, with its quote and a link to the turn it was drawn from while that conversation exists. */
export function OriginLine({ origin }: { origin: MemoryOrigin }) {
  const linked = origin.conversationId !== null && !origin.deleted;
  return (
    <>
      {whoWrote(origin)} on <time dateTime={origin.at}>{longDate(origin.at)}</time>
      {origin.actor === 'tool' && origin.conversationId && !origin.deleted && ', during a conversation'}
      {origin.deleted && ', in a conversation that has since been deleted'}
      {origin.quote ? (
        <>
          : <q class="origin-quote">{origin.quote.text}</q>
        </>
      ) : (
        '.'
      )}
      {linked && (
        <>
          {' '}
          <a href={turnHref(origin.conversationId!, origin.turn, origin.quote)}>
            {origin.turn === null ? 'Open the conversation' : `Open turn ${origin.turn} of the conversation`}
          </a>
        </>
      )}
    </>
  );
}

/** Where a memory came from: each origin, oldest first. */
export function MemoryOrigins({ origins }: { origins: readonly MemoryOrigin[] }) {
  if (origins.length === 0) return <p class="muted">Its origin was not recorded.</p>;
  return (
    <ul class="origins">
      {origins.map((origin, i) => (
        <li key={i}>
          <OriginLine origin={origin} />
        </li>
      ))}
    </ul>
  );
}
