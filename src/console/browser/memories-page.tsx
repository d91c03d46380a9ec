import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { MemoryEditor } from './memory-editor.js';
import { OriginLine } from './memory-origins.js';
import { ConfirmDialog } from './modal-dialog.js';
import { plural } from './plural.js';
import { ScrollTable } from './scroll-table.js';
import { StatusLine } from './status-line.js';
import { useStatus } from './use-status.js';
import { describeValidTime } from './valid-time.js';
import { KeyText, TagsText } from './wrap-points.js';

type Memory = Schemas['Memory'];
type MemoryHit = Schemas['MemorySearchHit'];
type TagCount = Schemas['TagCountsReply']['tags'][number];
type TagMode = 'any' | 'all' | 'none';
type SearchMode = 'hybrid' | 'vector' | 'text';

const PAGE_SIZE = 20;
const TAG_MODES: readonly { mode: TagMode; label: string }[] = [
  { mode: 'any', label: 'any' },
  { mode: 'all', label: 'all' },
  { mode: 'none', label: 'none' },
];

interface Props {
  session: ApiSession;
  agentId: string;
  params: URLSearchParams;
}

/** Memories by tag: counts, any/all/none and metadata filters, hybrid search, editing, deletion by tag. */
export function MemoriesPage({ session, agentId, params }: Props) {
  const { status, say, fail } = useStatus();
  const [tagCounts, setTagCounts] = useState<TagCount[]>([]);
  const [tagModes, setTagModes] = useState<Record<string, TagMode>>({});
  const [metadataFilter, setMetadataFilter] = useState('');
  const [items, setItems] = useState<Memory[]>([]);
  // The cursors of the pages before this one, so that "Previous" needs no backward cursor from the API.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [editing, setEditing] = useState<Memory | 'new' | undefined>(undefined);
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<SearchMode>('hybrid');
  const [hits, setHits] = useState<MemoryHit[] | undefined>(undefined);
  const [deletingTag, setDeletingTag] = useState<TagCount | undefined>(undefined);
  const [refresh, setRefresh] = useState(0);
  // `quarantined`: the firewall's review queue, memories held back from every chat until approved.
  const [view, setView] = useState<'active' | 'quarantined'>('active');

  const tagsIn = (m: TagMode) =>
    Object.entries(tagModes)
      .filter(([, v]) => v === m)
      .map(([t]) => t);
  const filters = { tagsAny: tagsIn('any'), tagsAll: tagsIn('all'), tagsNone: tagsIn('none') };
  const filterQuery = {
    agentId,
    ...(filters.tagsAny.length ? { tagsAny: filters.tagsAny } : {}),
    ...(filters.tagsAll.length ? { tagsAll: filters.tagsAll } : {}),
    ...(filters.tagsNone.length ? { tagsNone: filters.tagsNone } : {}),
  };
  const cursor = cursors[cursors.length - 1];

  // Each load drops its reply once a newer one has started: on a slow server the first page's
  // reply could otherwise land after the one that follows a save, and hide the saved memory.
  useEffect(() => {
    let stale = false;
    void session.client.GET('/v1/tags', { params: { query: { agentId } } }).then(({ data, error, response }) => {
      if (stale) return;
      if (error) fail(describeError(error, response));
      else setTagCounts(data.tags);
    });
    return () => void (stale = true);
  }, [agentId, refresh]);

  useEffect(() => {
    let stale = false;
    const metadata = metadataFilter.trim();
    void session.client
      .GET('/v1/memories', {
        params: {
          query: {
            ...filterQuery,
            limit: PAGE_SIZE,
            ...(cursor ? { cursor } : {}),
            ...(metadata ? { metadata } : {}),
            ...(view === 'quarantined' ? { status: view } : {}),
          },
        },
      })
      .then(({ data, error, response }) => {
        if (stale) return;
        if (error) return fail(describeError(error, response));
        setItems(data.items);
        setNextCursor(data.nextCursor);
      });
    return () => void (stale = true);
  }, [agentId, JSON.stringify(tagModes), metadataFilter, cursor, refresh, view]);

  // A citation of the chat links here with the memory's key: open it.
  const linkedKey = params.get('key');
  useEffect(() => {
    if (!linkedKey) return;
    void session.client.GET('/v1/memories/{key}', { params: { path: { key: linkedKey }, query: { agentId } } }).then(({ data, error, response }) => {
      if (error) fail(describeError(error, response));
      else setEditing(data.memory);
    });
  }, [linkedKey, agentId]);

  const setTagMode = (tag: string, m: TagMode) => {
    setTagModes((modes) => {
      const { [tag]: current, ...rest } = modes;
      return current === m ? rest : { ...rest, [tag]: m };
    });
    setCursors([undefined]);
  };

  const search = async (e: Event) => {
    e.preventDefault();
    if (!query.trim()) return setHits(undefined);
    const metadata = metadataFilter.trim();
    let parsedMetadata: Record<string, unknown> | undefined;
    try {
      parsedMetadata = metadata ? (JSON.parse(metadata) as Record<string, unknown>) : undefined;
    } catch {
      return fail('The metadata filter must be JSON, e.g. {"source": "notes"}');
    }
    const { data, error, response } = await session.client.POST('/v1/memories/search', {
      body: {
        query,
        mode,
        topK: PAGE_SIZE,
        ...filterQuery,
        ...(parsedMetadata ? { metadata: parsedMetadata } : {}),
        ...(view === 'quarantined' ? { includeQuarantined: true } : {}),
      },
    });
    if (error) return fail(describeError(error, response));
    setHits(data.hits);
    say(`${plural(data.hits.length, 'memory', 'memories')} found`);
  };

  const deleteByTag = async (tag: TagCount) => {
    setDeletingTag(undefined);
    const { data, error, response } = await session.client.DELETE('/v1/memories', { params: { query: { agentId, tagsAny: [tag.tag] } } });
    if (error) return fail(describeError(error, response));
    say(`Deleted ${plural(data.deleted, 'memory', 'memories')} tagged ${tag.tag}`);
    setTagModes(({ [tag.tag]: _dropped, ...rest }) => rest);
    setCursors([undefined]);
    setRefresh((n) => n + 1);
  };

  const approveMemory = async (memory: Memory) => {
    const { error, response } = await session.client.POST('/v1/memories/{key}/approve', { params: { path: { key: memory.key }, query: { agentId } } });
    if (error) return fail(describeError(error, response));
    say(`Approved ${memory.key}: it is recalled again`);
    setRefresh((n) => n + 1);
  };

  const showView = (next: 'active' | 'quarantined') => {
    setView(next);
    setHits(undefined);
    setCursors([undefined]);
  };

  const deleteMemory = async (memory: Memory) => {
    const { error, response } = await session.client.DELETE('/v1/memories/{key}', { params: { path: { key: memory.key }, query: { agentId } } });
    if (error) return fail(describeError(error, response));
    say(`Deleted ${memory.key}`);
    setRefresh((n) => n + 1);
  };

  return (
    <div class="page with-aside">
      <aside class="panel" aria-labelledby="tags-title">
        <h2 id="tags-title">Tags</h2>
        {tagCounts.length === 0 ? (
          <p>No tags yet.</p>
        ) : (
          <ul class="tag-list">
            {tagCounts.map((t) => (
              <li key={t.tag}>
                {/* The count is shown as "(3)" and read as "3 memories": hidden text, as a span's aria-label is not read everywhere (axe flags one for review). */}
                <span class="tag-name">
                  {t.tag}{' '}
                  <span class="count" aria-hidden="true">
                    ({t.count})
                  </span>
                  <span class="visually-hidden">{plural(t.count, 'memory', 'memories')}</span>
                </span>
                {/* biome-ignore lint/a11y/useSemanticElements: a row of toggle buttons, not a form's fieldset. */}
                <span class="tag-modes" role="group" aria-label={`Filter by ${t.tag}`}>
                  {TAG_MODES.map(({ mode: m, label }) => (
                    <button
                      key={m}
                      type="button"
                      class="small"
                      aria-pressed={tagModes[t.tag] === m}
                      onClick={() => setTagMode(t.tag, m)}
                      title={`${label}: ${t.tag}`}
                    >
                      {label}
                    </button>
                  ))}
                  <button type="button" class="small danger" onClick={() => setDeletingTag(t)} aria-label={`Delete the memories tagged ${t.tag}`}>
                    Delete
                  </button>
                </span>
              </li>
            ))}
          </ul>
        )}
        <label>
          Metadata filter (JSON, e.g. {'{"source":"notes"}'})
          <input
            value={metadataFilter}
            spellcheck={false}
            onChange={(e) => {
              setMetadataFilter(e.currentTarget.value);
              setCursors([undefined]);
            }}
          />
        </label>
      </aside>

      <section class="content" aria-labelledby="memories-title">
        <div class="page-head">
          <h1 id="memories-title">Memories</h1>
          <button type="button" onClick={() => setEditing('new')}>
            New memory
          </button>
        </div>
        {/* biome-ignore lint/a11y/useSemanticElements: a pair of toggle buttons, not a form's fieldset. */}
        <div class="tag-modes" role="group" aria-label="Which memories">
          <button type="button" class="small" aria-pressed={view === 'active'} onClick={() => showView('active')}>
            Active
          </button>
          <button type="button" class="small" aria-pressed={view === 'quarantined'} onClick={() => showView('quarantined')}>
            Quarantined for review
          </button>
        </div>
        <StatusLine status={status} />
        {editing && (
          <MemoryEditor
            key={editing === 'new' ? 'new' : editing.key}
            session={session}
            agentId={agentId}
            {...(editing === 'new' ? {} : { memory: editing })}
            onSaved={(message) => {
              say(message);
              setEditing(undefined);
              setRefresh((n) => n + 1);
            }}
            onCancel={() => setEditing(undefined)}
          />
        )}

        {/* biome-ignore lint/a11y/useSemanticElements: <form role="search"> is the landmark every browser supports. */}
        <form class="inline-form" onSubmit={search} role="search" aria-label="Search memories">
          <label>
            Search
            <input type="search" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
          </label>
          <fieldset class="segmented">
            <legend>Mode</legend>
            {(['hybrid', 'vector', 'text'] as const).map((m) => (
              <label key={m}>
                <input type="radio" name="memory-mode" value={m} checked={mode === m} onChange={() => setMode(m)} /> {m}
              </label>
            ))}
          </fieldset>
          <button type="submit">Search</button>
          {hits && (
            <button type="button" onClick={() => setHits(undefined)}>
              Clear search
            </button>
          )}
        </form>

        {hits ? (
          <ScrollTable caption={`Search results (${mode})`}>
            <thead>
              <tr>
                <th scope="col">Score</th>
                <th scope="col">Vector rank</th>
                <th scope="col">Text rank</th>
                <th scope="col">Key</th>
                <th scope="col">Content</th>
                <th scope="col">Tags</th>
              </tr>
            </thead>
            <tbody>
              {hits.map((h) => (
                <tr key={h.memory.key}>
                  <td>{h.score.toFixed(4)}</td>
                  <td>{h.ranks.vector ?? '–'}</td>
                  <td>{h.ranks.text ?? '–'}</td>
                  <td>
                    <button type="button" class="link" onClick={() => setEditing(h.memory)}>
                      <KeyText value={h.memory.key} />
                    </button>
                  </td>
                  <td class="prose">{h.memory.content}</td>
                  <td>
                    <TagsText tags={h.memory.tags} />
                  </td>
                </tr>
              ))}
            </tbody>
          </ScrollTable>
        ) : (
          <>
            <ScrollTable caption={`${view === 'quarantined' ? 'Quarantined: ' : ''}${describeFilters(filters)} (page ${cursors.length})`}>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Content</th>
                  <th scope="col">Tags</th>
                  <th scope="col">Origin</th>
                  <th scope="col">Updated</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((m) => (
                  <tr key={m.key}>
                    <td>
                      <KeyText value={m.key} />
                    </td>
                    <td class="prose">
                      {m.content}
                      <ValidTimeNote memory={m} />
                      {m.status === 'quarantined' && (
                        <span class="valid-time">Held back: {m.quarantineReasons.map((r) => r.replaceAll('_', ' ')).join(', ')}</span>
                      )}
                    </td>
                    <td>
                      <TagsText tags={m.tags} />
                    </td>
                    <td class="prose">
                      <FirstOrigin memory={m} />
                    </td>
                    <td>
                      <time dateTime={m.updatedAt}>{new Date(m.updatedAt).toLocaleString()}</time>
                    </td>
                    <td class="actions">
                      {m.status === 'quarantined' && (
                        <button type="button" class="small" onClick={() => void approveMemory(m)} aria-label={`Approve ${m.key}`}>
                          Approve
                        </button>
                      )}
                      <button type="button" class="small" onClick={() => setEditing(m)} aria-label={`Edit ${m.key}`}>
                        Edit
                      </button>
                      <button type="button" class="small danger" onClick={() => void deleteMemory(m)} aria-label={`Delete ${m.key}`}>
                        Delete
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </ScrollTable>
            {items.length === 0 && <p>{view === 'quarantined' ? 'No memories await review.' : 'No memories match.'}</p>}
            <nav class="pager" aria-label="Pages of memories">
              <button type="button" disabled={cursors.length === 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
                Previous page
              </button>
              <button type="button" disabled={!nextCursor} onClick={() => nextCursor && setCursors((c) => [...c, nextCursor])}>
                Next page
              </button>
            </nav>
          </>
        )}
      </section>

      {deletingTag && (
        <ConfirmDialog
          title="Delete by tag"
          message={`Delete ${plural(deletingTag.count, 'memory', 'memories')} tagged “${deletingTag.tag}”? This cannot be undone.`}
          confirmLabel={`Delete ${deletingTag.count}`}
          onConfirm={() => void deleteByTag(deletingTag)}
          onCancel={() => setDeletingTag(undefined)}
        />
      )}
    </div>
  );
}

/** A memory's valid time under its content, when it has one. */
function ValidTimeNote({ memory }: { memory: Memory }) {
  const text = describeValidTime(memory);
  return text ? <span class="valid-time">{text}</span> : null;
}

/** Where a memory first came from; the editor lists every origin. */
function FirstOrigin({ memory }: { memory: Memory }) {
  const [first, ...more] = memory.sources;
  if (!first) return <span class="muted">Not recorded</span>;
  return (
    <>
      <OriginLine origin={first} />
      {more.length > 0 && <span class="muted"> (and {plural(more.length, 'later origin', 'later origins')})</span>}
    </>
  );
}

function describeFilters(f: { tagsAny: string[]; tagsAll: string[]; tagsNone: string[] }): string {
  const parts = [
    f.tagsAny.length ? `any of ${f.tagsAny.join(', ')}` : '',
    f.tagsAll.length ? `all of ${f.tagsAll.join(', ')}` : '',
    f.tagsNone.length ? `none of ${f.tagsNone.join(', ')}` : '',
  ].filter(Boolean);
  return parts.length ? `Memories tagged ${parts.join('; ')}` : 'All memories';
}
