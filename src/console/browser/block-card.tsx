import { useId, useState } from 'preact/hooks';
import type { ApiSession } from './api-session.js';
import { BlockGauge } from './block-gauge.js';
import { BlockHistory } from './block-history.js';
import { type Block, scopeWords } from './block-scope.js';

interface Props {
  session: ApiSession;
  block: Block;
  onEdit: () => void;
  onDelete: () => void;
  onApproved: (message: string) => void;
  onFail: (message: string) => void;
}

/** One block: its label and marks, what it is for, its value, how full it is, and its history folded under it. */
export function BlockCard({ session, block, onEdit, onDelete, onApproved, onFail }: Props) {
  const headingId = useId();
  // The history is asked for once unfolded, not for every block of the page.
  const [historyOpen, setHistoryOpen] = useState(false);
  const whose = `${block.label} of ${scopeWords(block)}`;
  return (
    <article class="block-card" aria-labelledby={headingId}>
      <div class="block-head">
        <h3 id={headingId}>
          <code>{block.label}</code>
        </h3>
        {block.readOnly && <span class="badge">read-only</span>}
        {block.schema && <span class="badge">JSON schema</span>}
      </div>
      {block.description && <p class="block-description">{block.description}</p>}
      {block.value ? <pre class="block-value">{block.value}</pre> : <p class="muted">(empty)</p>}
      <BlockGauge block={block} name={`${block.label}: characters used of its limit`} />
      {block.schema && (
        <details class="block-fold">
          <summary>Schema</summary>
          <pre class="block-value">{JSON.stringify(block.schema, null, 2)}</pre>
        </details>
      )}
      <details class="block-fold" onToggle={(e) => setHistoryOpen(e.currentTarget.open)}>
        <summary>History</summary>
        {historyOpen && <BlockHistory session={session} block={block} onApproved={onApproved} onFail={onFail} />}
      </details>
      <div class="actions">
        <button type="button" class="small" onClick={onEdit} aria-label={`Edit ${whose}`}>
          Edit
        </button>
        <button type="button" class="small danger" onClick={onDelete} aria-label={`Delete ${whose}`}>
          Delete
        </button>
      </div>
    </article>
  );
}
