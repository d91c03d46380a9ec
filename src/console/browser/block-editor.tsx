import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { JsonBody } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { type Block, type BlockScope, scopeQuery, scopeWords } from './block-scope.js';
import { type FieldIssues, IssueText, fieldIssuesOf, issueProps } from './field-issues.js';

const DEFAULT_LIMIT = 2000;

interface Props {
  session: ApiSession;
  scope: BlockScope;
  /** The block to edit; undefined for a new one in `scope`. */
  block?: Block;
  onSaved: (message: string) => void;
  onCancel: () => void;
}

/**
 * The path the API rejected for a field: the field's own, or one under it (a value against its
 * schema is refused at `value.name`), so that the message lands on the field it is about.
 */
function issuePath(issues: FieldIssues, field: string): string {
  return Object.keys(issues).find((path) => path === field || path.startsWith(`${field}.`)) ?? field;
}

/** Creates or replaces one block: a PUT sends it whole, so every field is the form's. */
export function BlockEditor({ session, scope, block, onSaved, onCancel }: Props) {
  const [label, setLabel] = useState(block?.label ?? '');
  const [value, setValue] = useState(block?.value ?? '');
  const [description, setDescription] = useState(block?.description ?? '');
  const [limit, setLimit] = useState(String(block?.limit ?? DEFAULT_LIMIT));
  const [readOnly, setReadOnly] = useState(block?.readOnly ?? false);
  const [schema, setSchema] = useState(block?.schema ? JSON.stringify(block.schema, null, 2) : '');
  const [issues, setIssues] = useState<FieldIssues>({});
  const [error, setError] = useState('');
  const base = useId();
  const first = useRef<HTMLInputElement & HTMLTextAreaElement>(null);

  // The keyboard lands where the editing starts, in the same commit as the editor appears.
  useLayoutEffect(() => first.current?.focus(), []);

  /** A field's props and its message: marked and described when the API (or the schema's JSON) refused it. */
  const checked = (field: string) => {
    const path = issuePath(issues, field);
    const id = `${base}-${field}-issue`;
    return { props: issueProps(issues, path, id), issue: <IssueText issues={issues} path={path} id={id} /> };
  };

  const save = async (e: Event) => {
    e.preventDefault();
    let parsedSchema: Record<string, unknown> | undefined;
    if (schema.trim()) {
      try {
        parsedSchema = JSON.parse(schema) as Record<string, unknown>;
      } catch (err) {
        setIssues({ schema: `is not JSON (${String(err instanceof Error ? err.message : err)})` });
        setError('The schema must be a JSON object, e.g. {"type": "object"}');
        return;
      }
    }
    const body: JsonBody<'putBlock'> = {
      ...scopeQuery(scope),
      value,
      limit: limit.trim() === '' ? DEFAULT_LIMIT : Number(limit),
      readOnly,
      ...(description.trim() ? { description: description.trim() } : {}),
      ...(parsedSchema ? { schema: parsedSchema } : {}),
    };
    const name = block?.label ?? label.trim();
    const { data, error: refused, response } = await session.client.PUT('/v1/blocks/{label}', { params: { path: { label: name } }, body });
    if (refused) {
      setIssues(fieldIssuesOf(refused));
      setError(describeError(refused, response));
      return;
    }
    onSaved(`${data.created ? 'Created' : 'Saved'} block ${data.block.label} of ${scopeWords(scope)}`);
  };

  const labelField = checked('label');
  const valueField = checked('value');
  const descriptionField = checked('description');
  const limitField = checked('limit');
  const schemaField = checked('schema');
  const used = value.length;
  const title = block ? `Edit block ${block.label} of ${scopeWords(scope)}` : `New block of ${scopeWords(scope)}`;
  return (
    <section class="panel" aria-labelledby="block-editor-title">
      <h2 id="block-editor-title">{title}</h2>
      <form onSubmit={save} class="grid-form">
        {!block && (
          <div class="field">
            <label>
              Label
              <input
                ref={first}
                required
                value={label}
                onInput={(e) => setLabel(e.currentTarget.value)}
                spellcheck={false}
                {...labelField.props}
                aria-describedby={[`${base}-label-help`, labelField.props['aria-describedby']].filter(Boolean).join(' ')}
              />
            </label>
            <span id={`${base}-label-help`} class="muted field-help">
              a–z, 0–9, _ and -, up to 64
            </span>
            {labelField.issue}
          </div>
        )}
        <div class="field">
          <label>
            Limit (characters)
            <input type="number" min={1} max={20000} value={limit} onInput={(e) => setLimit(e.currentTarget.value)} {...limitField.props} />
          </label>
          {limitField.issue}
        </div>
        <label class="checkbox">
          <input type="checkbox" checked={readOnly} onChange={(e) => setReadOnly(e.currentTarget.checked)} /> Read-only (the model’s tools cannot change it)
        </label>
        <div class="field wide">
          <label>
            Description (what it is for, shown to the model)
            <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} {...descriptionField.props} />
          </label>
          {descriptionField.issue}
        </div>
        <div class="field wide">
          <label>
            Value
            <textarea {...(block ? { ref: first } : {})} rows={5} value={value} onInput={(e) => setValue(e.currentTarget.value)} {...valueField.props} />
          </label>
          <span class={Number(limit) > 0 && used > Number(limit) ? 'field-help error' : 'muted field-help'}>
            {used.toLocaleString('en')} of {Number(limit || DEFAULT_LIMIT).toLocaleString('en')} characters
          </span>
          {valueField.issue}
        </div>
        <div class="field wide">
          <label>
            Schema (optional JSON Schema the value, read as JSON, must satisfy)
            <textarea rows={4} value={schema} onInput={(e) => setSchema(e.currentTarget.value)} spellcheck={false} {...schemaField.props} />
          </label>
          {schemaField.issue}
        </div>
        <p class="status error wide" role="alert">
          {error}
        </p>
        <div class="actions wide">
          <button type="submit">Save block</button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
