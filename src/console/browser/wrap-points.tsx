import { Fragment } from 'preact';

// After these a key may wrap: `kitchen-renovation-budget`, `warranty_cards.appliances`, `notes/2026`.
const KEY_SEPARATOR = /(?<=[-_./:@])/;

/**
 * A memory's key, which may wrap after its separators and nowhere else: a narrow column breaks
 * `kitchen-renovation-budget` after a hyphen, never inside `renovation`. The <wbr>s add no text,
 * so the key copies, and is read, as it is.
 */
export function KeyText({ value }: { value: string }) {
  const parts = value.split(KEY_SEPARATOR);
  return (
    <span class="key">
      {parts.map((part, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </span>
  );
}

/** Tags separated by commas, each kept whole on its line: a list wraps between tags only. */
export function TagsText({ tags }: { tags: readonly string[] }) {
  return (
    <>
      {tags.map((tag, i) => (
        <Fragment key={tag}>
          {i > 0 && ', '}
          <span class="tag">{tag}</span>
        </Fragment>
      ))}
    </>
  );
}
