import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { JsonBody, Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { plural } from './plural.js';

interface Props {
  session: ApiSession;
  agentId: string;
  /** Only this user's conversations, and imports become theirs; without one, every user's. */
  userId?: string;
  currentId?: string;
  /** Bumped by the page when a turn ends, so the list shows new and renamed conversations. */
  refresh: number;
  onOpen: (id: string) => void;
  onNew: () => void;
  onStatus: (message: string, isError: boolean) => void;
}

/**
 * The agent's conversations: open one, start a new one, export one as JSON, import an export. On a
 * phone the list is folded behind a button, so that the message box is on the first screen.
 */
export function ConversationList({ session, agentId, userId, currentId, refresh, onOpen, onNew, onStatus }: Props) {
  const [items, setItems] = useState<Schemas['Conversation'][]>([]);
  const [imported, setImported] = useState(0);
  const [unfolded, setUnfolded] = useState(false);
  const listId = useId();
  const toggle = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    let stale = false;
    void session.client
      .GET('/v1/conversations', { params: { query: { agentId, ...(userId ? { userId } : {}), limit: 50 } } })
      .then(({ data, error, response }) => {
        if (stale) return;
        if (error) onStatus(describeError(error, response), true);
        else setItems(data.items);
      });
    return () => void (stale = true);
  }, [agentId, userId, refresh, imported]);

  const exportConversation = async (conversation: Schemas['Conversation']) => {
    const { data, error, response } = await session.client.GET('/v1/conversations/{id}/export', {
      params: { path: { id: conversation.id }, query: { agentId } },
    });
    if (error) return onStatus(describeError(error, response), true);
    const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }));
    const link = Object.assign(document.createElement('a'), { href: url, download: `conversation-${conversation.id}.json` });
    link.click();
    // After the click has started the download.
    setTimeout(() => URL.revokeObjectURL(url), 0);
    onStatus(`Exported ${conversation.title}`, false);
  };

  const importFile = async (file: File) => {
    let body: JsonBody<'importConversation'>;
    try {
      // The server validates the export; this only has to be JSON.
      body = JSON.parse(await file.text()) as JsonBody<'importConversation'>;
    } catch {
      return onStatus(`${file.name} is not JSON`, true);
    }
    const { data, error, response } = await session.client.POST('/v1/conversations/import', {
      params: { query: { agentId, ...(userId ? { userId } : {}) } },
      body,
    });
    if (error) return onStatus(describeError(error, response), true);
    onStatus(`Imported ${data.conversation.title}`, false);
    setImported((n) => n + 1);
    onOpen(data.conversation.id);
  };

  return (
    <aside class={unfolded ? 'panel conversation-panel' : 'panel conversation-panel folded'} aria-labelledby="conversations-title">
      <h2 id="conversations-title">Conversations</h2>
      <div class="actions">
        <button type="button" onClick={onNew}>
          New conversation
        </button>
        <label class="button">
          Import…
          <input
            type="file"
            class="visually-hidden"
            accept=".json,application/json"
            onChange={(e) => {
              const file = e.currentTarget.files?.[0];
              e.currentTarget.value = '';
              if (file) void importFile(file);
            }}
          />
        </label>
        {items.length > 0 && (
          <button ref={toggle} type="button" class="fold-toggle" aria-expanded={unfolded} aria-controls={listId} onClick={() => setUnfolded(!unfolded)}>
            {unfolded ? 'Hide the list' : `Show ${plural(items.length, 'conversation', 'conversations')}`}
          </button>
        )}
      </div>
      {items.length === 0 ? (
        <p>None yet.</p>
      ) : (
        <ul class="conversations" id={listId}>
          {items.map((c) => (
            <li key={c.id} class={c.id === currentId ? 'current' : ''}>
              <button
                type="button"
                class="link"
                onClick={() => {
                  // On a phone the list folds again, so that the conversation opened is what is seen,
                  // and the focus goes to the button that unfolds it rather than being lost with the
                  // list; on a desktop that button is not shown, and the focus stays where it is.
                  if (unfolded) {
                    toggle.current?.focus();
                    setUnfolded(false);
                  }
                  onOpen(c.id);
                }}
                aria-current={c.id === currentId ? 'true' : undefined}
              >
                {c.title}
              </button>
              <span class="count">
                {plural(c.turnCount, 'turn', 'turns')}
                {!userId && c.userId !== null && `, with ${c.userId}`}
              </span>
              <button type="button" class="small" onClick={() => void exportConversation(c)} aria-label={`Export ${c.title}`}>
                Export
              </button>
            </li>
          ))}
        </ul>
      )}
    </aside>
  );
}
