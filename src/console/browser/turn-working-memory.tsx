import { useEffect, useState } from 'preact/hooks';
import { type ApiSession, describeError } from './api-session.js';
import { BlockGauge } from './block-gauge.js';
import { type Block, blockScopesOf, scopeQuery, scopeWords } from './block-scope.js';
import type { TurnScope } from './chat-turn-state.js';
import { plural } from './plural.js';

/**
 * The blocks a turn's prompt carried, as they were read when its answer ended (mounted then):
 * the chat's reply does not list them, so the three scopes' lists stand in, which also show what
 * the model wrote to them during the turn. Folded under the answer; absent when there are none.
 */
export function TurnWorkingMemory({ session, scope }: { session: ApiSession; scope: TurnScope }) {
  const [blocks, setBlocks] = useState<Block[] | undefined>(undefined);
  const [error, setError] = useState('');

  useEffect(() => {
    void Promise.all(
      blockScopesOf(scope.agentId, scope.userId ?? undefined).map(async (s) => {
        const { data, error: failed, response } = await session.client.GET('/v1/blocks', { params: { query: scopeQuery(s) } });
        if (failed) throw new Error(describeError(failed, response));
        return data.blocks;
      }),
    ).then(
      (lists) => setBlocks(lists.flat()),
      (err: unknown) => setError(`The working memory could not be read: ${err instanceof Error ? err.message : String(err)}`),
    );
  }, []);

  if (error) return <p class="muted">{error}</p>;
  if (!blocks || blocks.length === 0) return null;
  return (
    <details class="working-memory">
      <summary>Working memory ({plural(blocks.length, 'block', 'blocks')})</summary>
      <p class="muted">The blocks this turn’s prompt carried, as they were when the answer ended.</p>
      <ul class="working-memory-blocks">
        {blocks.map((block) => (
          <li key={`${block.agentId ?? ''}/${block.userId ?? ''}/${block.label}`}>
            <code>{block.label}</code> <span class="muted">({scopeWords(block)})</span>
            {block.readOnly && <span class="badge">read-only</span>}
            {block.value ? <pre class="block-value">{block.value}</pre> : <p class="muted">(empty)</p>}
            <BlockGauge block={block} name={`${block.label} of ${scopeWords(block)}: characters used of its limit`} />
          </li>
        ))}
      </ul>
    </details>
  );
}
