/** Each field an API error rejected, by its dotted path (`cast.0.agentId`): the message to show beside it. */
export type FieldIssues = Readonly<Record<string, string>>;

export function fieldIssuesOf(error: unknown): FieldIssues {
  const details = (error as { error?: { details?: { path?: string; message?: string }[] | null } } | undefined)?.error?.details ?? [];
  return Object.fromEntries(details.filter((d) => d.path).map((d) => [d.path!, d.message ?? 'is not valid']));
}

/**
 * What an input needs for its rejection to be seen and heard: marked invalid, the message
 * (rendered by `IssueText` under the same id) as its description.
 */
export function issueProps(issues: FieldIssues, path: string, id: string): { 'aria-invalid'?: 'true'; 'aria-describedby'?: string } {
  return issues[path] ? { 'aria-invalid': 'true', 'aria-describedby': id } : {};
}

/** The message of a rejected field, under the field; nothing when it was not rejected. */
export function IssueText({ issues, path, id }: { issues: FieldIssues; path: string; id: string }) {
  const message = issues[path];
  return message ? (
    <span id={id} class="field-issue">
      {path}: {message}
    </span>
  ) : null;
}
