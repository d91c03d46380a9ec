import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiSession } from './api-session.js';
import type { Activity, ChatTurn } from './chat-turn-state.js';
import { CitedAnswer, type CitedSource } from './cited-answer.js';
import { MarkedText } from './marked-text.js';
import { RunTree } from './run-tree.js';
import { TurnImages } from './turn-images.js';
import { TurnWorkingMemory } from './turn-working-memory.js';

interface Props {
  turn: ChatTurn;
  session: ApiSession;
  agentId: string;
  /** Resumes a turn paused on request (`POST /v1/runs/{runId}/resume`). */
  onResume: () => void;
  onOpenSource: (source: CitedSource) => void;
  /** Decides the paused turn's approvals, all at once as the API wants them. */
  onDecide: (decisions: { toolCallId: string; approve: boolean }[]) => void;
}

/**
 * One turn: the question with its images, the (streaming) answer with its citations and its
 * reasoning folded under it, tool calls, steering, compactions, approvals and a pause to resume.
 */
export function ChatTurnView({ turn, session, agentId, onResume, onOpenSource, onDecide }: Props) {
  const [decided, setDecided] = useState<Record<string, boolean>>({});
  const approvals = turn.pause?.approvals ?? [];
  const article = useRef<HTMLElement>(null);
  // The tree is read once its panel is opened, and again each time it is opened (statuses move).
  const [treeOpen, setTreeOpen] = useState(false);
  const delegated = turn.activity.some((a) => a.kind === 'delegate');

  // A link led here: the keyboard and the screen reader land on this turn, scrolled into view.
  useEffect(() => {
    if (turn.linked) article.current?.focus();
  }, [turn.linked]);

  const decide = (toolCallId: string, approve: boolean) => {
    const next = { ...decided, [toolCallId]: approve };
    setDecided(next);
    if (approvals.every((a) => a.toolCallId in next)) onDecide(approvals.map((a) => ({ toolCallId: a.toolCallId, approve: next[a.toolCallId]! })));
  };

  return (
    <article
      ref={article}
      class={turn.linked ? 'turn linked' : 'turn'}
      aria-busy={turn.state === 'streaming'}
      {...(turn.number === undefined ? {} : { 'aria-label': `Turn ${turn.number}` })}
      {...(turn.linked ? { tabIndex: -1 } : {})}
    >
      <p class="question">
        <span class="who">You</span> {turn.linked?.quote ? <MarkedText text={turn.question} offset={0} ranges={[turn.linked.quote]} /> : turn.question}
      </p>
      <TurnImages images={turn.images} session={session} conversationId={turn.conversationId} agentId={agentId} />
      <div class="reply">
        <span class="who">Agent{turn.mode ? ` (${turn.mode})` : ''}</span>
        {turn.activity.length > 0 && (
          <ul class="activity" aria-label="Tool calls, steering and compaction">
            {turn.activity.map((a, i) => (
              <ActivityItem key={i} activity={a} />
            ))}
          </ul>
        )}
        {delegated && turn.runId && (
          <details class="run-view" onToggle={(e) => setTreeOpen(e.currentTarget.open)}>
            <summary>Run tree</summary>
            {treeOpen && <RunTree session={session} runId={turn.runId} label="Runs of this turn" />}
          </details>
        )}
        <CitedAnswer turn={turn} onOpen={onOpenSource} />
        {turn.reasoning && (
          <details class="reasoning">
            <summary>Reasoning{turn.state === 'streaming' && !turn.answer ? '…' : ''}</summary>
            <p>{turn.reasoning}</p>
          </details>
        )}
        {turn.state === 'streaming' && <p class="muted">Answering…</p>}
        {/* A model's turn only: an extractive answer has no prompt. Mounted once the answer ended, it reads the blocks then. */}
        {turn.scope && turn.state === 'done' && turn.mode === 'llm' && <TurnWorkingMemory session={session} scope={turn.scope} />}
        {turn.note && <p class="muted">{turn.note}</p>}
        {turn.followUps.length > 0 && (
          <ul class="activity" aria-label="Follow-ups">
            {turn.followUps.map((f) => (
              <li key={f.runId}>Follow-up, asked once this turn completes: “{f.message}”</li>
            ))}
          </ul>
        )}
        {turn.error && (
          <p class="status error" role="alert">
            {turn.error}
          </p>
        )}
        {turn.pause?.status === 'requires_approval' && (
          <section class="approvals" aria-label="Approvals">
            <p>The agent waits for your decision:</p>
            <ul>
              {approvals.map((a) => (
                <li key={a.toolCallId}>
                  <code>{a.name}</code>({JSON.stringify(a.arguments)}){' '}
                  {a.toolCallId in decided ? (
                    <strong>{decided[a.toolCallId] ? 'approved' : 'denied'}</strong>
                  ) : (
                    <>
                      <button type="button" class="small" onClick={() => decide(a.toolCallId, true)}>
                        Approve
                      </button>
                      <button type="button" class="small danger" onClick={() => decide(a.toolCallId, false)}>
                        Deny
                      </button>
                    </>
                  )}
                </li>
              ))}
            </ul>
          </section>
        )}
        {turn.pause?.status === 'paused' && turn.state === 'paused' && (
          <p class="paused">
            The turn is paused.{' '}
            <button type="button" class="small" onClick={onResume}>
              Resume
            </button>
          </p>
        )}
        {turn.pause?.status === 'requires_action' && (
          <p class="muted">
            The run waits for client tool outputs (run {turn.pause.runId}); a client answers with <code>POST /v1/runs/{'{runId}'}/tool-outputs</code>.
          </p>
        )}
      </div>
    </article>
  );
}

function ActivityItem({ activity: a }: { activity: Activity }) {
  switch (a.kind) {
    case 'tool':
      return (
        <li class={a.isError ? 'error' : ''}>
          Tool <code>{a.name}</code>({JSON.stringify(a.arguments)}){a.result === undefined ? ' …' : `: ${a.result.slice(0, 200)}`}
        </li>
      );
    case 'delegate':
      return (
        <li class={a.status === 'failed' || a.status === 'cancelled' ? 'error' : ''}>
          Delegated to <strong>{a.role}</strong> (agent <code>{a.agentId}</code>): {a.status ?? 'running…'}
        </li>
      );
    case 'compaction':
      return (
        <li>
          Compacted the history ({a.strategy}): {a.tokensBefore} → {a.tokensAfter} tokens (limit {a.limit})
        </li>
      );
    case 'steer':
      return <li>You steered: “{a.message}”</li>;
    case 'retry':
      return (
        <li>
          The model call failed ({a.status ?? 'no answer'}: {a.reason}); trying again in {Math.round(a.delayMs / 100) / 10} s
        </li>
      );
  }
}
