import type { ComponentChildren } from 'preact';
import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * A table in a container that scrolls sideways when the table is wider than the screen (a phone),
 * rather than squeezing its words apart. The container takes the focus and is a region named by
 * the caption: without a Tab stop, a keyboard could not scroll a table that holds nothing focusable.
 * While the table is wider than its region, a line above says so (the region's description) and
 * the edge with more columns is shaded: columns past the right edge looked cut off, not scrollable.
 */
export function ScrollTable({ caption, children }: { caption: ComponentChildren; children: ComponentChildren }) {
  const captionId = useId();
  const hintId = useId();
  const region = useRef<HTMLElement>(null);
  const [wider, setWider] = useState(false);

  useLayoutEffect(() => {
    const element = region.current;
    if (!element) return;
    const measure = () => setWider(element.scrollWidth > element.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    if (element.firstElementChild) observer.observe(element.firstElementChild);
    return () => observer.disconnect();
  }, []);

  return (
    <>
      {wider && (
        <p id={hintId} class="scroll-hint">
          Scroll sideways for the other columns.
        </p>
      )}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be focusable for the keyboard to scroll it (WCAG 2.1.1). */}
      <section ref={region} class="table-scroll" aria-labelledby={captionId} aria-describedby={wider ? hintId : undefined} tabIndex={0}>
        <table>
          <caption id={captionId}>{caption}</caption>
          {children}
        </table>
      </section>
    </>
  );
}
