import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';

type Run = Schemas['Run'];

/**
 * Deeper than any tree the API makes (delegations stop at depth 4, a workflow's steps add one): a
 * guard against a run listed under itself, which would otherwise be fetched without end.
 */
const MAX_DEPTH = 8;

type Loaded = { state: 'loading' } | { state: 'loaded'; run: Run } | { state: 'failed'; error: string };

/** How many tokens a run spent, its children's included (the API rolls them up). */
const tokens = (usage: Run['usage']) => `${usage.totalTokens} ${usage.totalTokens === 1 ? 'token' : 'tokens'}`;

/** One run of the tree, as `GET /v1/runs/{id}` has it now, and the runs under it, each read in turn. */
function RunNode({ session, runId, depth, reload }: { session: ApiSession; runId: string; depth: number; reload: number }) {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  useEffect(() => {
    let stale = false;
    void session.client
      .GET('/v1/runs/{runId}', { params: { path: { runId } } })
      .then(({ data, error, response }) => {
        if (stale) return;
        setLoaded(error ? { state: 'failed', error: describeError(error, response) } : { state: 'loaded', run: data });
      })
      .catch((err) => !stale && setLoaded({ state: 'failed', error: String(err) }));
    return () => void (stale = true);
  }, [runId, reload]);

  if (loaded.state === 'loading') return <li class="muted">Reading run {runId}…</li>;
  if (loaded.state === 'failed')
    return (
      <li class="error">
        Run {runId} could not be read: {loaded.error}
      </li>
    );
  const { run } = loaded;
  const children = run.children ?? [];
  const name = run.role ?? run.agentId;
  return (
    <li>
      <span class="run-line">
        <strong>{name}</strong>
        {run.role && (
          <>
            {' '}
            (agent <code>{run.agentId}</code>)
          </>
        )}
        : <span class={`run-status ${run.status}`}>{run.status}</span>, {tokens(run.usage)}
        {run.stopReason && run.stopReason !== run.status && <>, stopped: {run.stopReason}</>}
        <span class="run-id">
          , run <code>{run.id}</code>
        </span>
      </span>
      {children.length > 0 &&
        (depth >= MAX_DEPTH ? (
          <p class="muted">{children.length} more runs under it, past the depth shown.</p>
        ) : (
          <ul aria-label={`Runs under ${name}`}>
            {children.map((child) => (
              <RunNode key={child.runId} session={session} runId={child.runId} depth={depth + 1} reload={reload} />
            ))}
          </ul>
        ))}
    </li>
  );
}

/**
 * A run and the runs started under it (a lead's delegations, a workflow's steps), recursively:
 * each one's agent, role, status and usage. Read when shown, and again on request: a running
 * tree's statuses change, and the stream told only the first level.
 */
export function RunTree({ session, runId, label }: { session: ApiSession; runId: string; label: string }) {
  const [reload, setReload] = useState(0);
  return (
    <div class="run-tree">
      <ul class="tree" aria-label={label}>
        <RunNode session={session} runId={runId} depth={0} reload={reload} />
      </ul>
      <button type="button" class="small" onClick={() => setReload((n) => n + 1)}>
        Read the tree again
      </button>
    </div>
  );
}
