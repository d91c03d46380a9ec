import { type Block, usageWords } from './block-scope.js';

/**
 * How full a block is: a meter (named, so that a screen reader says whose it is) and the same in
 * words beside it. Past 90% the meter turns to its warning colour: the model's next append may
 * not fit.
 */
export function BlockGauge({ block, name }: { block: Pick<Block, 'value' | 'limit'>; name: string }) {
  return (
    <div class="block-gauge">
      <meter min={0} max={block.limit} value={block.value.length} low={block.limit * 0.75} high={block.limit * 0.9} optimum={0} aria-label={name} />
      <span>{usageWords(block)}</span>
    </div>
  );
}
