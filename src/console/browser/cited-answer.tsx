import type { ChatTurn, ChatSource, Citation } from './chat-turn-state.js';

export type CitedSource = Citation | ChatSource;

/** What `[n]` of a turn points at: the reply's citation once done, else the streamed source. */
export function citedSource(turn: ChatTurn, n: number): CitedSource | undefined {
  return turn.citations.find((c) => c.id === n) ?? turn.sources.find((s) => s.id === n);
}

export function sourceLabel(source: CitedSource): string {
  if (source.kind === 'memory') return `memory ${source.key}`;
  if (source.kind === 'document') return [source.title, ...source.headingPath].join(' › ');
  return `turn ${source.turn} of another conversation`;
}

/** The answer's text with each `[n]` that cites something as a button that opens it. */
export function CitedAnswer({ turn, onOpen }: { turn: ChatTurn; onOpen: (source: CitedSource) => void }) {
  const parts = turn.answer.split(/(\[\d+\])/);
  return (
    <p class="answer">
      {parts.map((part, i) => {
        const n = /^\[(\d+)\]$/.exec(part)?.[1];
        const source = n === undefined ? undefined : citedSource(turn, Number(n));
        if (!source) return part;
        return (
          <button key={i} type="button" class="cite" onClick={() => onOpen(source)} aria-label={`Source ${n}: ${sourceLabel(source)}`}>
            {part}
          </button>
        );
      })}
    </p>
  );
}
