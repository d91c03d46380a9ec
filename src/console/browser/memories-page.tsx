import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { MemoryEditor } from './memory-editor.js';
import { lookUpMemory } from './memory-lookup.js';
import { MemoryHitsTable, MemoryListTable } from './memory-tables.js';
import { MemoryTagsPanel, type TagMode } from './memory-tags-panel.js';
import { ConfirmDialog } from './modal-dialog.js';
import { plural } from './plural.js';
import { StatusLine } from './status-line.js';
import { useStatus } from './use-status.js';
import { memoryScope, readScope } from './user-scope.js';

type Memory = Schemas['Memory'];
type MemoryHit = Schemas['MemorySearchHit'];
type TagCount = Schemas['TagCountsReply']['tags'][number];
type SearchMode = 'hybrid' | 'vector' | 'text';

const PAGE_SIZE = 20;

interface Props {
  session: ApiSession;
  agentId: string;
  /** The header's user: their memories and the shared ones; none, every user's. */
  userId: string | undefined;
  params: URLSearchParams;
}

/** Memories by tag: counts, any/all/none and metadata filters, hybrid search, editing, deletion by tag. */
export function MemoriesPage({ session, agentId, userId, params }: Props) {
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
    ...readScope(userId),
    ...(filters.tagsAny.length ? { tagsAny: filters.tagsAny } : {}),
    ...(filters.tagsAll.length ? { tagsAll: filters.tagsAll } : {}),
    ...(filters.tagsNone.length ? { tagsNone: filters.tagsNone } : {}),
  };
  const cursor = cursors[cursors.length - 1];

  // Each load drops its reply once a newer one has started: on a slow server the first page's
  // reply could otherwise land after the one that follows a save, and hide the saved memory.
  useEffect(() => {
    let stale = false;
    void session.client.GET('/v1/tags', { params: { query: { agentId, ...readScope(userId) } } }).then(({ data, error, response }) => {
      if (stale) return;
      if (error) fail(describeError(error, response));
      else setTagCounts(data.tags);
    });
    return () => void (stale = true);
  }, [agentId, userId, refresh]);

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
  }, [agentId, userId, JSON.stringify(tagModes), metadataFilter, cursor, refresh, view]);

  // A citation of the chat links here with the memory's key, and its user when known: open it.
  const linkedKey = params.get('key');
  const linkedUser = params.get('user') ?? userId;
  useEffect(() => {
    if (!linkedKey) return;
    void lookUpMemory(session, linkedKey, agentId, linkedUser).then((found) => {
      if ('error' in found) fail(found.error);
      else setEditing(found.memory);
    });
  }, [linkedKey, linkedUser, agentId]);

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
    const { data, error, response } = await session.client.DELETE('/v1/memories', {
      params: { query: { agentId, ...(userId ? { userId } : {}), tagsAny: [tag.tag] } },
    });
    if (error) return fail(describeError(error, response));
    say(`Deleted ${plural(data.deleted, 'memory', 'memories')} tagged ${tag.tag}${userId ? ` of ${userId}` : ''}`);
    setTagModes(({ [tag.tag]: _dropped, ...rest }) => rest);
    setCursors([undefined]);
    setRefresh((n) => n + 1);
  };

  const approveMemory = async (memory: Memory) => {
    const { error, response } = await session.client.POST('/v1/memories/{key}/approve', {
      params: { path: { key: memory.key }, query: { agentId, ...memoryScope(memory) } },
    });
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
    const { error, response } = await session.client.DELETE('/v1/memories/{key}', {
      params: { path: { key: memory.key }, query: { agentId, ...memoryScope(memory) } },
    });
    if (error) return fail(describeError(error, response));
    say(`Deleted ${memory.key}`);
    setRefresh((n) => n + 1);
  };

  return (
    <div class="page with-aside">
      <MemoryTagsPanel
        tagCounts={tagCounts}
        tagModes={tagModes}
        metadataFilter={metadataFilter}
        onTagMode={setTagMode}
        onDeleteTag={setDeletingTag}
        onMetadataFilter={(filter) => {
          setMetadataFilter(filter);
          setCursors([undefined]);
        }}
      />

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
            key={editing === 'new' ? 'new' : `${editing.userId ?? ''}/${editing.key}`}
            session={session}
            agentId={agentId}
            {...(editing === 'new' ? (userId ? { userId } : {}) : { memory: editing })}
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
          <MemoryHitsTable caption={`Search results (${mode})`} hits={hits} onEdit={setEditing} />
        ) : (
          <>
            <MemoryListTable
              caption={`${view === 'quarantined' ? 'Quarantined: ' : ''}${describeFilters(filters, userId)} (page ${cursors.length})`}
              items={items}
              onEdit={setEditing}
              onApprove={(m) => void approveMemory(m)}
              onDelete={(m) => void deleteMemory(m)}
            />
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
          message={
            userId
              ? `Delete the memories of user “${userId}” tagged “${deletingTag.tag}”? Shared memories keep theirs. This cannot be undone.`
              : `Delete ${plural(deletingTag.count, 'memory', 'memories')} tagged “${deletingTag.tag}”? This cannot be undone.`
          }
          confirmLabel={userId ? `Delete ${userId}’s` : `Delete ${deletingTag.count}`}
          onConfirm={() => void deleteByTag(deletingTag)}
          onCancel={() => setDeletingTag(undefined)}
        />
      )}
    </div>
  );
}

function describeFilters(f: { tagsAny: string[]; tagsAll: string[]; tagsNone: string[] }, userId: string | undefined): string {
  const parts = [
    f.tagsAny.length ? `any of ${f.tagsAny.join(', ')}` : '',
    f.tagsAll.length ? `all of ${f.tagsAll.join(', ')}` : '',
    f.tagsNone.length ? `none of ${f.tagsNone.join(', ')}` : '',
  ].filter(Boolean);
  const whose = userId ? ` of ${userId} and shared` : '';
  return parts.length ? `Memories${whose} tagged ${parts.join('; ')}` : userId ? `Memories${whose}` : 'All memories';
}
