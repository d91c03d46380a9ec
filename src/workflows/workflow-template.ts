/** What a node's prompt is filled from: the run's input, the outputs so far, and the run's state. */
export interface TemplateScope {
  input: string;
  outputs: ReadonlyMap<string, string>;
  state: Readonly<Record<string, unknown>>;
}

const PLACEHOLDER = /\{\{\s*(input|nodes\.([A-Za-z0-9_-]+)\.output|state\.([A-Za-z0-9_.-]+))\s*\}\}/g;

/**
 * Fills `{{input}}`, `{{nodes.<id>.output}}` (the node's latest output) and `{{state.<key>}}`; a
 * placeholder with nothing to fill (a node not run yet, a key not set) becomes the empty string,
 * and any other `{{...}}` is left as written.
 */
export function renderTemplate(template: string, scope: TemplateScope): string {
  return template.replace(PLACEHOLDER, (_match, _whole: string, node: string | undefined, key: string | undefined) => {
    if (node !== undefined) return scope.outputs.get(node) ?? '';
    if (key !== undefined) return textOf(scope.state[key]);
    return scope.input;
  });
}

function textOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The run's state: the input's keys when it is an object, then each output that is a JSON object
 * merged over it, so a node can hand named values to the nodes after it.
 */
export function mergeState(state: Record<string, unknown>, output: string): Record<string, unknown> {
  const trimmed = output.trim();
  if (!trimmed.startsWith('{')) return state;
  try {
    const parsed = JSON.parse(trimmed) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? { ...state, ...(parsed as Record<string, unknown>) } : state;
  } catch {
    return state;
  }
}
