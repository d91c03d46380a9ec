import type { Schemas } from '../../client/memrag-client.js';

type Workflow = Schemas['Workflow'];
type Edge = Workflow['edges'][number];

/** When an edge is taken, in words. */
function conditionOf(edge: Edge): string {
  if (!edge.when) return 'always';
  return 'outputMatches' in edge.when ? `when the output matches /${edge.when.outputMatches}/` : `when the output is “${edge.when.outputEquals}”`;
}

/** A workflow's graph, read-only: its nodes (each an agent and its prompt's template) and its edges in the order they are tried. */
export function WorkflowDefinition({ workflow }: { workflow: Workflow }) {
  return (
    <div class="workflow-definition">
      <p>
        Starts at <code>{workflow.entry}</code>; at most {workflow.maxSteps ?? 25} steps. Version {workflow.version}.
      </p>
      <h3 id="workflow-nodes">Nodes</h3>
      <ul class="workflow-nodes" aria-labelledby="workflow-nodes">
        {workflow.nodes.map((node) => (
          <li key={node.id}>
            <code>{node.id}</code>, as agent <code>{node.agentId}</code>
            {node.id === workflow.entry && <strong> (entry)</strong>}
            <pre>{node.prompt}</pre>
          </li>
        ))}
      </ul>
      <h3 id="workflow-edges">Edges</h3>
      {workflow.edges.length === 0 ? (
        <p class="muted">None: the run ends after its entry node.</p>
      ) : (
        <ol class="workflow-edges" aria-labelledby="workflow-edges">
          {workflow.edges.map((edge, i) => (
            <li key={i}>
              <code>{edge.from}</code> → <code>{edge.to}</code> {conditionOf(edge)}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
