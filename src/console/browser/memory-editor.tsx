import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { MemoryOrigins } from './memory-origins.js';
import { parseTagList } from './tag-list.js';
import { memoryScope } from './user-scope.js';
import { describeValidTime } from './valid-time.js';

type Memory = Schemas['Memory'];
type HistoryEvent = Schemas['MemoryHistoryReply']['events'][number];

interface Props {
  session: ApiSession;
  agentId: string;
  /** The memory to edit; undefined for a new one. */
  memory?: Memory;
  /** A new memory's user to start with (the header's); an edited memory stays its own user's. */
  userId?: string;
  onSaved: (message: string) => void;
  onCancel: () => void;
}

/** Creates or edits one memory (content, tags, metadata) and shows where it came from and its history of changes. */
export function MemoryEditor({ session, agentId, memory, userId, onSaved, onCancel }: Props) {
  const [key, setKey] = useState(memory?.key ?? '');
  const [owner, setOwner] = useState(userId ?? '');
  const [content, setContent] = useState(memory?.content ?? '');
  const [tags, setTags] = useState(memory?.tags.join(', ') ?? '');
  const [metadata, setMetadata] = useState(memory ? JSON.stringify(memory.metadata) : '{}');
  const [error, setError] = useState('');
  const [history, setHistory] = useState<HistoryEvent[]>([]);
  const contentField = useRef<HTMLTextAreaElement>(null);

  // Opened from a list's Edit button: the keyboard lands where the editing starts. A layout effect,
  // so that the focus moves in the same commit as the editor appears: a plain effect ran a frame
  // later, and what someone had begun typing into the key field by then went on in the content
  // (the browser test lost its key that way, on a busy machine).
  useLayoutEffect(() => contentField.current?.focus(), []);

  useEffect(() => {
    if (!memory) return;
    void session.client
      .GET('/v1/memories/{key}/history', { params: { path: { key: memory.key }, query: { agentId, ...memoryScope(memory) } } })
      .then(({ data }) => setHistory(data?.events ?? []));
  }, [memory?.key, memory?.userId, memory?.updatedAt]);

  const save = async (e: Event) => {
    e.preventDefault();
    let parsedMetadata: Record<string, unknown>;
    try {
      parsedMetadata = JSON.parse(metadata || '{}') as Record<string, unknown>;
    } catch {
      setError('Metadata must be a JSON object, e.g. {"source": "notes"}');
      return;
    }
    const body = { content, tags: parseTagList(tags), metadata: parsedMetadata };
    // An edit is saved where the memory lives: under another scope the same key would be a second memory.
    const query = { agentId, ...(memory ? memoryScope(memory) : owner.trim() ? { userId: owner.trim() } : {}) };
    const { error: failed, response } =
      memory || key.trim()
        ? await session.client.PUT('/v1/memories/{key}', { params: { path: { key: memory?.key ?? key.trim() }, query }, body })
        : await session.client.POST('/v1/memories', { params: { query }, body });
    if (failed) return setError(describeError(failed, response));
    onSaved(memory ? `Saved ${memory.key}` : 'Memory saved');
  };

  const title = memory ? `Edit memory ${memory.key}${memory.userId === null ? '' : ` of ${memory.userId}`}` : 'New memory';
  const validTime = memory && describeValidTime(memory);
  return (
    <section class="panel" aria-labelledby="memory-editor-title">
      <h2 id="memory-editor-title">{title}</h2>
      <form onSubmit={save} class="stack">
        {memory ? (
          <p>{memory.userId === null ? 'Shared: recalled for every user of the agent.' : `The memory of user ${memory.userId}.`}</p>
        ) : (
          <>
            <label>
              Key (optional: one is made up when left empty)
              <input value={key} onInput={(e) => setKey(e.currentTarget.value)} />
            </label>
            <label>
              Its user (empty: shared by every user)
              <input value={owner} onInput={(e) => setOwner(e.currentTarget.value)} spellcheck={false} />
            </label>
          </>
        )}
        <label>
          Content
          <textarea ref={contentField} required rows={4} value={content} onInput={(e) => setContent(e.currentTarget.value)} />
        </label>
        <label>
          Tags (separated by commas)
          <input value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
        </label>
        <label>
          Metadata (JSON object)
          <input value={metadata} onInput={(e) => setMetadata(e.currentTarget.value)} spellcheck={false} />
        </label>
        <p class="status error" role="alert">
          {error}
        </p>
        <div class="actions">
          <button type="submit">Save memory</button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
      {memory && (
        <>
          <h3>Where it comes from</h3>
          {validTime && <p>{validTime}</p>}
          <MemoryOrigins origins={memory.sources} />
          <h3>History</h3>
          {history.length === 0 ? (
            <p>No changes recorded.</p>
          ) : (
            <ol class="history">
              {history.map((h, i) => (
                <li key={i}>
                  <time dateTime={h.at}>{new Date(h.at).toLocaleString()}</time> <strong>{h.event}</strong> by {h.actor.type}
                  {h.content !== null && <span>: {h.content}</span>}
                  {h.tags.length > 0 && <span class="tags"> [{h.tags.join(', ')}]</span>}
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </section>
  );
}
