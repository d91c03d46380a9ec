import { useState } from 'preact/hooks';
import type { JsonBody, Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { RunTree } from './run-tree.js';

type Reply = Schemas['WorkflowRunReply'];
type Input = JsonBody<'runWorkflow'>['input'];

/** The typed input: a JSON object when it reads as one (its keys start the run's state), else the text itself. */
function inputOf(text: string): { input: Input } | { error: string } {
  if (!text.trim().startsWith('{')) return { input: text };
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return { input: parsed as Record<string, unknown> };
  } catch {
    // Reported below: text that starts as an object was meant as one.
  }
  return { error: 'The input starts with “{” but is not a JSON object: fix it, or start it with other text' };
}

interface Props {
  session: ApiSession;
  workflow: Schemas['Workflow'];
  /** The header's user: every step runs for them. */
  userId: string | undefined;
  say: (text: string) => void;
  fail: (text: string) => void;
}

/** Runs a workflow on an input, then shows where it went: status, stop reason, the path, each step's output and the run's tree. */
export function WorkflowRunPanel({ session, workflow, userId, say, fail }: Props) {
  const [text, setText] = useState('');
  const [running, setRunning] = useState(false);
  const [result, setResult] = useState<Reply | undefined>(undefined);
  const [treeOpen, setTreeOpen] = useState(false);

  const run = async (e: Event) => {
    e.preventDefault();
    const read = inputOf(text);
    if ('error' in read) return fail(read.error);
    setRunning(true);
    setResult(undefined);
    setTreeOpen(false);
    say(`Running ${workflow.name}…`);
    try {
      const { data, error, response } = await session.client.POST('/v1/workflows/{id}/runs', {
        params: { path: { id: workflow.id } },
        body: { input: read.input, ...(userId ? { userId } : {}) },
      });
      if (error) return fail(describeError(error, response));
      // Asked without `stream`, the reply is the JSON one (the route also declares its SSE form).
      const reply = data as Reply;
      setResult(reply);
      say(`${workflow.name} ran ${reply.steps.length} ${reply.steps.length === 1 ? 'step' : 'steps'}: ${reply.status}`);
    } catch (err) {
      fail(`The run could not be asked for: ${String(err)}`);
    } finally {
      setRunning(false);
    }
  };

  return (
    <>
      <form class="stack" onSubmit={run}>
        <label for="workflow-input">Input</label>
        <textarea id="workflow-input" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} aria-describedby="workflow-input-help" />
        <span id="workflow-input-help" class="muted">
          Text fills <code>{'{{input}}'}</code>; a JSON object also starts the run's state (<code>{'{{state.<key>}}'}</code>).{' '}
          {userId ? `The steps run for user ${userId}.` : 'The steps run for no user.'}
        </span>
        <button type="submit" disabled={running}>
          {running ? 'Running…' : 'Run workflow'}
        </button>
      </form>
      {result && (
        <section class="workflow-result" aria-labelledby="workflow-result-title">
          <h3 id="workflow-result-title">Result</h3>
          <dl class="facts">
            <dt>Status</dt>
            <dd class={result.status === 'failed' || result.status === 'cancelled' ? 'error' : ''}>{result.status}</dd>
            <dt>Stop reason</dt>
            <dd>{result.stopReason}</dd>
            <dt>Output</dt>
            <dd class="output">{result.output ?? '(none)'}</dd>
            <dt>Tokens</dt>
            <dd>{result.usage.totalTokens}</dd>
            <dt>Run</dt>
            <dd>
              <code class="run-id">{result.runId}</code>
            </dd>
          </dl>
          {result.error && (
            <p class="error">
              {result.error.code}: {result.error.message}
            </p>
          )}
          {(result.approvals?.length ?? 0) > 0 && (
            <p>
              A step waits for approval of {result.approvals!.map((a) => a.name).join(', ')}: decide with <code>POST /v1/runs/{result.runId}/approvals</code>.
            </p>
          )}
          {result.requiredAction && (
            <p>
              A step waits for client tool outputs: answer with <code>POST /v1/runs/{result.runId}/tool-outputs</code>.
            </p>
          )}
          <h4 id="workflow-path">Path</h4>
          <ol class="workflow-path" aria-labelledby="workflow-path">
            {result.path.map((node, i) => (
              <li key={i}>
                <code>{node}</code>
              </li>
            ))}
          </ol>
          <h4 id="workflow-steps">Steps</h4>
          <ol class="workflow-steps" aria-labelledby="workflow-steps">
            {result.steps.map((step) => (
              <li key={step.runId}>
                <code>{step.node}</code> <span class="run-id muted">(run {step.runId})</span>
                <pre>{step.output}</pre>
              </li>
            ))}
          </ol>
          <details class="run-view" onToggle={(e) => setTreeOpen(e.currentTarget.open)}>
            <summary>Run tree</summary>
            {treeOpen && <RunTree session={session} runId={result.runId} label="Runs of this workflow run" />}
          </details>
        </section>
      )}
    </>
  );
}
