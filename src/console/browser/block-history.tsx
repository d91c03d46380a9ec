import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { type Block, scopeQuery } from './block-scope.js';

type BlockEvent = Schemas['BlockEvent'];

const PAGE = 20;

interface Props {
  session: ApiSession;
  block: Block;
  onApproved: (message: string) => void;
  onFail: (message: string) => void;
}

/** Who wrote an event, in words: the API (an approval says which write), the model with its tool and run, a template, an import. */
export function writerOf(event: BlockEvent): string {
  const actor = event.actor as Record<string, unknown> & { type: BlockEvent['actor']['type'] };
  switch (actor.type) {
    case 'api':
      return typeof actor.approves === 'number' ? `the API, approving held write #${actor.approves}` : 'the API';
    case 'model':
      return `the model (${String(actor.tool ?? 'a tool')}) in run ${String(actor.runId ?? '?')}`;
    case 'template':
      return `the agent’s template${typeof actor.agentVersion === 'number' ? ` (version ${actor.agentVersion})` : ''}`;
    case 'import':
      return 'an import';
  }
}

/**
 * A block's history, newest page first asked (oldest first within it), older pages on request:
 * each value, who wrote it and when; a write the memory firewall held is marked, with its reasons
 * and a button that applies it.
 */
export function BlockHistory({ session, block, onApproved, onFail }: Props) {
  const [events, setEvents] = useState<BlockEvent[]>([]);
  const [older, setOlder] = useState<number | null>(null);
  const [loaded, setLoaded] = useState(false);
  const query = { ...scopeQuery(block), limit: PAGE };

  // Asked again once the block changes (an edit, an approval): the newest page is what moved.
  useEffect(() => {
    let stale = false;
    void session.client.GET('/v1/blocks/{label}/history', { params: { path: { label: block.label }, query } }).then(({ data, error, response }) => {
      if (stale) return;
      if (error) return onFail(describeError(error, response));
      setEvents(data.events);
      setOlder(data.nextBefore);
      setLoaded(true);
    });
    return () => void (stale = true);
  }, [block.label, block.agentId, block.userId, block.updatedAt]);

  const showOlder = async () => {
    if (older === null) return;
    const { data, error, response } = await session.client.GET('/v1/blocks/{label}/history', {
      params: { path: { label: block.label }, query: { ...query, before: older } },
    });
    if (error) return onFail(describeError(error, response));
    setEvents((shown) => [...data.events, ...shown]);
    setOlder(data.nextBefore);
  };

  const approve = async (event: BlockEvent) => {
    const { error, response } = await session.client.POST('/v1/blocks/{label}/history/{eventId}/approve', {
      params: { path: { label: block.label, eventId: event.id }, query: scopeQuery(block) },
    });
    if (error) return onFail(describeError(error, response));
    onApproved(`Approved held write #${event.id} to ${block.label}`);
  };

  if (!loaded) return <p class="muted">Loading the history…</p>;
  return (
    <>
      {older !== null && (
        <button type="button" class="small" onClick={() => void showOlder()}>
          Show older events
        </button>
      )}
      <ol class="history block-history" aria-label={`History of ${block.label}`}>
        {events.map((event) => (
          <li key={event.id} class={event.status === 'quarantined' ? 'held' : undefined}>
            <time dateTime={event.at}>{new Date(event.at).toLocaleString()}</time> <strong>{event.event}</strong> by {writerOf(event)}
            {event.status === 'quarantined' && (
              <>
                {' '}
                <span class="mark held-mark">held by the memory firewall, not applied</span>
                {event.quarantineReasons.length > 0 && <span class="muted"> ({event.quarantineReasons.join('; ')})</span>}{' '}
                <button type="button" class="small" onClick={() => void approve(event)} aria-label={`Approve held write #${event.id} to ${block.label}`}>
                  Approve
                </button>
              </>
            )}
            {event.status === 'approved' && event.event === 'quarantined' && <span class="muted"> (held, then approved)</span>}
            {event.value !== null && <pre class="block-value">{event.value}</pre>}
          </li>
        ))}
      </ol>
    </>
  );
}
