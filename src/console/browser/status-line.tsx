import type { Status } from './use-status.js';

/**
 * Both live regions stay in the page, empty or not: a screen reader announces changes to a
 * region it already knows, not a region that appears. Errors interrupt (alert), news waits (status).
 */
export function StatusLine({ status }: { status: Status }) {
  return (
    <div class="status-line">
      <p class="status" role="status">
        {status.isError ? '' : status.message}
      </p>
      <p class="status error" role="alert">
        {status.isError ? status.message : ''}
      </p>
    </div>
  );
}
