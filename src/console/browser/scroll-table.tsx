import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

/**
 * A table in a container that scrolls sideways when the table is wider than the screen (a phone),
 * rather than squeezing its words apart. The container takes the focus and is a region named by
 * the caption: without a Tab stop, a keyboard could not scroll a table that holds nothing focusable.
 */
export function ScrollTable({ caption, children }: { caption: ComponentChildren; children: ComponentChildren }) {
  const captionId = useId();
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable for the keyboard to scroll it (WCAG 2.1.1).
    <section class="table-scroll" aria-labelledby={captionId} tabIndex={0}>
      <table>
        <caption id={captionId}>{caption}</caption>
        {children}
      </table>
    </section>
  );
}
