import { useEffect, useRef, useState } from 'preact/hooks';
import { CitedAnswer, type CitedSource } from './cited-answer.js';
import type { ChatTurn } from './chat-turn-state.js';
import { MarkedText } from './marked-text.js';

interface Props {
  turn: ChatTurn;
  onOpenSource: (source: CitedSource) => void;
  /** Decides the paused turn's approvals, all at once as the API wants them. */
  onDecide: (decisions: { toolCallId: string; approve: boolean }[]) => void;
}

/** One turn: the question, the (streaming) answer with its citations, tool calls, compactions and approvals. */
export function ChatTurnView({ turn, onOpenSource, onDecide }: Props) {
  const [decided, setDecided] = useState<Record<string, boolean>>({});
  const approvals = turn.pause?.approvals ?? [];
  const article = useRef<HTMLElement>(null);

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
      <div class="reply">
        <span class="who">Agent{turn.mode ? ` (${turn.mode})` : ''}</span>
        {turn.activity.length > 0 && (
          <ul class="activity" aria-label="Tool calls and compaction">
            {turn.activity.map((a, i) =>
              a.kind === 'tool' ? (
                <li key={i} class={a.isError ? 'error' : ''}>
                  Tool <code>{a.name}</code>({JSON.stringify(a.arguments)}){a.result === undefined ? ' …' : `: ${a.result.slice(0, 200)}`}
                </li>
              ) : (
                <li key={i}>
                  Compacted the history ({a.strategy}): {a.tokensBefore} → {a.tokensAfter} tokens (limit {a.limit})
                </li>
              ),
            )}
          </ul>
        )}
        <CitedAnswer turn={turn} onOpen={onOpenSource} />
        {turn.state === 'streaming' && <p class="muted">Answering…</p>}
        {turn.note && <p class="muted">{turn.note}</p>}
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
        {turn.pause?.status === 'requires_action' && (
          <p class="muted">
            The run waits for client tool outputs (run {turn.pause.runId}); a client answers with <code>POST /v1/runs/{'{runId}'}/tool-outputs</code>.
          </p>
        )}
      </div>
    </article>
  );
}
