import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { ScrollTable } from './scroll-table.js';
import { StatusLine } from './status-line.js';
import { useStatus } from './use-status.js';
import { WorkflowDefinition } from './workflow-definition.js';
import { WorkflowRunPanel } from './workflow-run-panel.js';

type Workflow = Schemas['Workflow'];

/**
 * Workflows: the list, one's graph (read-only; definitions are written through the API), and a run
 * of it on an input with where it went.
 */
export function WorkflowsPage({ session, userId }: { session: ApiSession; userId: string | undefined }) {
  const { status, say, fail } = useStatus();
  const [workflows, setWorkflows] = useState<Workflow[] | undefined>(undefined);
  const [open, setOpen] = useState<Workflow | undefined>(undefined);

  useEffect(() => {
    let stale = false;
    void session.client.GET('/v1/workflows', { params: { query: { limit: 100 } } }).then(({ data, error, response }) => {
      if (stale) return;
      if (error) fail(describeError(error, response));
      else setWorkflows(data.items);
    });
    return () => void (stale = true);
  }, []);

  return (
    <div class="page">
      <div class="page-head">
        <h1>Workflows</h1>
      </div>
      <StatusLine status={status} />
      {workflows?.length === 0 && (
        <p>
          No workflows yet: define one with <code>POST /v1/workflows</code> (see the API's docs).
        </p>
      )}
      {workflows && workflows.length > 0 && (
        <ScrollTable caption="Workflows">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Version</th>
              <th scope="col">Nodes</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {workflows.map((w) => (
              <tr key={w.id}>
                <td>{w.name}</td>
                <td>
                  <code>{w.id}</code>
                </td>
                <td>{w.version}</td>
                <td>{w.nodes.length}</td>
                <td class="actions">
                  <button type="button" class="small" onClick={() => setOpen(w)} aria-label={`Open ${w.name}`}>
                    Open
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </ScrollTable>
      )}
      {open && (
        <section class="panel" aria-labelledby="workflow-title" key={open.id}>
          <h2 id="workflow-title">{open.name}</h2>
          <WorkflowDefinition workflow={open} />
          <h3>Run it</h3>
          <WorkflowRunPanel session={session} workflow={open} userId={userId} say={say} fail={fail} />
        </section>
      )}
    </div>
  );
}
