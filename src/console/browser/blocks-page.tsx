import { useEffect, useState } from 'preact/hooks';
import { type ApiSession, describeError } from './api-session.js';
import { BlockCard } from './block-card.js';
import { BlockEditor } from './block-editor.js';
import { type Block, type BlockScope, blockScopesOf, scopeQuery, scopeWords } from './block-scope.js';
import { ConfirmDialog } from './modal-dialog.js';
import { StatusLine } from './status-line.js';
import { useStatus } from './use-status.js';

interface Props {
  session: ApiSession;
  agentId: string;
  /** The header's user: with one, their blocks and the agent's view of them beside the agent's. */
  userId: string | undefined;
}

type Editing = { scope: BlockScope; block?: Block };

/**
 * Working memory: the blocks a turn of the header's agent with its user carries in its prompt, in
 * their three scopes and in the prompt's order, each with how full it is, its history, and editing.
 */
export function BlocksPage({ session, agentId, userId }: Props) {
  const { status, say, fail } = useStatus();
  const scopes = blockScopesOf(agentId, userId);
  const [lists, setLists] = useState<Partial<Record<BlockScope['key'], Block[]>>>({});
  const [editing, setEditing] = useState<Editing | undefined>(undefined);
  const [deleting, setDeleting] = useState<Block | undefined>(undefined);
  const [refresh, setRefresh] = useState(0);

  // Another agent or user: their blocks are loading, not the last ones'. A reload after a save
  // keeps the cards meanwhile, so that a history someone unfolded stays open and shows the change.
  useEffect(() => setLists({}), [agentId, userId]);

  // A reply that a newer load overtook (another agent or user typed in the header) is dropped.
  useEffect(() => {
    let stale = false;
    void Promise.all(
      scopes.map(async (scope) => {
        const { data, error, response } = await session.client.GET('/v1/blocks', { params: { query: scopeQuery(scope) } });
        if (error) throw new Error(describeError(error, response));
        return [scope.key, data.blocks] as const;
      }),
    ).then(
      (loaded) => !stale && setLists(Object.fromEntries(loaded)),
      (err: unknown) => !stale && fail(err instanceof Error ? err.message : String(err)),
    );
    return () => void (stale = true);
  }, [agentId, userId, refresh]);

  const reload = (message: string) => {
    say(message);
    setRefresh((n) => n + 1);
  };

  const remove = async (block: Block) => {
    setDeleting(undefined);
    const { error, response } = await session.client.DELETE('/v1/blocks/{label}', { params: { path: { label: block.label }, query: scopeQuery(block) } });
    if (error) return fail(describeError(error, response));
    reload(`Deleted block ${block.label} of ${scopeWords(block)}`);
  };

  return (
    <div class="page">
      <div class="page-head">
        <h1>Blocks</h1>
      </div>
      <p class="muted">
        Working memory: labelled blocks carried in every prompt of a turn that sees them, kept by the model with its block tools. A turn of agent{' '}
        <code>{agentId}</code>
        {userId ? (
          <>
            {' '}
            with user <code>{userId}</code> sees the three scopes below, in this order.
          </>
        ) : (
          ' with no user sees the agent’s blocks only; set a User in the header for theirs.'
        )}
      </p>
      <StatusLine status={status} />
      {editing && (
        <BlockEditor
          key={`${editing.scope.key}/${editing.block?.label ?? ''}`}
          session={session}
          scope={editing.scope}
          {...(editing.block ? { block: editing.block } : {})}
          onSaved={(message) => {
            setEditing(undefined);
            reload(message);
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      {scopes.map((scope) => {
        const blocks = lists[scope.key];
        return (
          <section key={scope.key} class="block-scope" aria-labelledby={`scope-${scope.key}`}>
            <div class="page-head">
              <h2 id={`scope-${scope.key}`}>{scope.title}</h2>
              <button type="button" onClick={() => setEditing({ scope })} aria-label={`New block of ${scopeWords(scope)}`}>
                New block
              </button>
            </div>
            <p class="muted">{scope.reach}</p>
            {blocks === undefined ? (
              <p class="muted">Loading…</p>
            ) : blocks.length === 0 ? (
              <p>No blocks.</p>
            ) : (
              <div class="block-list">
                {blocks.map((block) => (
                  <BlockCard
                    key={block.label}
                    session={session}
                    block={block}
                    onEdit={() => setEditing({ scope, block })}
                    onDelete={() => setDeleting(block)}
                    onApproved={reload}
                    onFail={fail}
                  />
                ))}
              </div>
            )}
          </section>
        );
      })}
      {deleting && (
        <ConfirmDialog
          title="Delete block"
          message={`Delete block “${deleting.label}” of ${scopeWords(deleting)}? Turns no longer see it; its history stays.`}
          confirmLabel={`Delete ${deleting.label}`}
          onConfirm={() => void remove(deleting)}
          onCancel={() => setDeleting(undefined)}
        />
      )}
    </div>
  );
}
