import type { Schemas } from '../../client/memrag-client.js';
import { OriginLine } from './memory-origins.js';
import { plural } from './plural.js';
import { ScrollTable } from './scroll-table.js';
import { ownerLabel } from './user-scope.js';
import { describeValidTime } from './valid-time.js';
import { KeyText, TagsText } from './wrap-points.js';

type Memory = Schemas['Memory'];
type MemoryHit = Schemas['MemorySearchHit'];

/** Whose the memory is: its user, or "shared" (muted) for the agent's memories every user recalls. */
function UserCell({ memory }: { memory: Memory }) {
  return <td class={memory.userId === null ? 'muted' : ''}>{ownerLabel(memory.userId)}</td>;
}

/** The memories search's hits: the fused score and each side's rank. */
export function MemoryHitsTable({ caption, hits, onEdit }: { caption: string; hits: MemoryHit[]; onEdit: (memory: Memory) => void }) {
  return (
    <ScrollTable caption={caption}>
      <thead>
        <tr>
          <th scope="col">Score</th>
          <th scope="col">Vector rank</th>
          <th scope="col">Text rank</th>
          <th scope="col">Key</th>
          <th scope="col">Content</th>
          <th scope="col">Tags</th>
          <th scope="col">User</th>
        </tr>
      </thead>
      <tbody>
        {hits.map((h) => (
          <tr key={`${h.memory.userId ?? ''}/${h.memory.key}`}>
            <td>{h.score.toFixed(4)}</td>
            <td>{h.ranks.vector ?? '–'}</td>
            <td>{h.ranks.text ?? '–'}</td>
            <td>
              <button type="button" class="link" onClick={() => onEdit(h.memory)}>
                <KeyText value={h.memory.key} />
              </button>
            </td>
            <td class="prose">{h.memory.content}</td>
            <td>
              <TagsText tags={h.memory.tags} />
            </td>
            <UserCell memory={h.memory} />
          </tr>
        ))}
      </tbody>
    </ScrollTable>
  );
}

interface ListProps {
  caption: string;
  items: Memory[];
  onEdit: (memory: Memory) => void;
  onApprove: (memory: Memory) => void;
  onDelete: (memory: Memory) => void;
}

/**
 * One page of memories. Two users may each have a memory under the same key, so a row's buttons
 * name the user as well as the key when the memory has one.
 */
export function MemoryListTable({ caption, items, onEdit, onApprove, onDelete }: ListProps) {
  return (
    <ScrollTable caption={caption}>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">User</th>
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
        {items.map((m) => {
          const name = m.userId === null ? m.key : `${m.key} of ${m.userId}`;
          return (
            <tr key={`${m.userId ?? ''}/${m.key}`}>
              <td>
                <KeyText value={m.key} />
              </td>
              <UserCell memory={m} />
              <td class="prose">
                {m.content}
                <ValidTimeNote memory={m} />
                {m.status === 'quarantined' && <span class="valid-time">Held back: {m.quarantineReasons.map((r) => r.replaceAll('_', ' ')).join(', ')}</span>}
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
                  <button type="button" class="small" onClick={() => onApprove(m)} aria-label={`Approve ${name}`}>
                    Approve
                  </button>
                )}
                <button type="button" class="small" onClick={() => onEdit(m)} aria-label={`Edit ${name}`}>
                  Edit
                </button>
                <button type="button" class="small danger" onClick={() => onDelete(m)} aria-label={`Delete ${name}`}>
                  Delete
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </ScrollTable>
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
