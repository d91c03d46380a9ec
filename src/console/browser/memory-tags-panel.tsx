import type { Schemas } from '../../client/memrag-client.js';
import { plural } from './plural.js';

type TagCount = Schemas['TagCountsReply']['tags'][number];
export type TagMode = 'any' | 'all' | 'none';

const TAG_MODES: readonly { mode: TagMode; label: string }[] = [
  { mode: 'any', label: 'any' },
  { mode: 'all', label: 'all' },
  { mode: 'none', label: 'none' },
];

interface Props {
  tagCounts: TagCount[];
  tagModes: Record<string, TagMode>;
  metadataFilter: string;
  onTagMode: (tag: string, mode: TagMode) => void;
  onDeleteTag: (tag: TagCount) => void;
  onMetadataFilter: (filter: string) => void;
}

/** The memories page's filters: each tag with its count, any/all/none toggles and a delete, and the metadata filter. */
export function MemoryTagsPanel({ tagCounts, tagModes, metadataFilter, onTagMode, onDeleteTag, onMetadataFilter }: Props) {
  return (
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
                    onClick={() => onTagMode(t.tag, m)}
                    title={`${label}: ${t.tag}`}
                  >
                    {label}
                  </button>
                ))}
                <button type="button" class="small danger" onClick={() => onDeleteTag(t)} aria-label={`Delete the memories tagged ${t.tag}`}>
                  Delete
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <label>
        Metadata filter (JSON, e.g. {'{"source":"notes"}'})
        <input value={metadataFilter} spellcheck={false} onChange={(e) => onMetadataFilter(e.currentTarget.value)} />
      </label>
    </aside>
  );
}
