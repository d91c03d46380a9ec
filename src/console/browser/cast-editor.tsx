import { useId } from 'preact/hooks';
import type { JsonBody, Schemas } from '../../client/memrag-client.js';
import { type FieldIssues, IssueText, issueProps } from './field-issues.js';

/** One role of an agent's cast as the form holds it: text as typed, `role` empty for the agent's id. */
export interface CastRow {
  agentId: string;
  role: string;
  description: string;
  hidden: boolean;
}

/** The cast and the limits of its delegations, as the agent form edits them. */
export interface CastForm {
  cast: CastRow[];
  maxDepth: string;
  maxParallel: string;
}

type Cast = NonNullable<JsonBody<'createAgent'>['cast']>;
type Delegation = NonNullable<JsonBody<'createAgent'>['delegation']>;

export function castFormOf(agent?: Schemas['Agent']): CastForm {
  return {
    cast: (agent?.cast ?? []).map((m) => ({ agentId: m.agentId, role: m.role ?? '', description: m.description, hidden: m.hidden ?? false })),
    maxDepth: agent?.delegation?.maxDepth === undefined ? '' : String(agent.delegation.maxDepth),
    maxParallel: agent?.delegation?.maxParallel === undefined ? '' : String(agent.delegation.maxParallel),
  };
}

/** The cast as the API takes it; an empty role is left out (it defaults to the agent's id), as is `hidden: false`. */
export function castOf(form: CastForm): Cast {
  return form.cast.map((row) => ({
    agentId: row.agentId.trim(),
    ...(row.role.trim() ? { role: row.role.trim() } : {}),
    description: row.description,
    ...(row.hidden ? { hidden: true } : {}),
  }));
}

/** The delegation limits given, or undefined when neither is: the defaults (2 and 4) apply. */
export function delegationOf(form: CastForm): Delegation | undefined {
  const number = (text: string) => (text.trim() === '' ? undefined : Number(text));
  const maxDepth = number(form.maxDepth);
  const maxParallel = number(form.maxParallel);
  if (maxDepth === undefined && maxParallel === undefined) return undefined;
  return { ...(maxDepth === undefined ? {} : { maxDepth }), ...(maxParallel === undefined ? {} : { maxParallel }) };
}

const EMPTY_ROW: CastRow = { agentId: '', role: '', description: '', hidden: false };

interface Props {
  form: CastForm;
  onChange: (form: CastForm) => void;
  /** What the API rejected on the last save, by field path (`cast.0.agentId`, `delegation.maxDepth`). */
  issues: FieldIssues;
}

/**
 * The agents this one may delegate to (each a role the built-in `delegate` tool names) and how
 * deep and how many at once: rows to add and remove, each field marked and described when the API
 * rejected it.
 */
export function CastEditor({ form, onChange, issues }: Props) {
  const base = useId();
  const setRow = (i: number, change: Partial<CastRow>) => onChange({ ...form, cast: form.cast.map((row, j) => (j === i ? { ...row, ...change } : row)) });
  const text = (i: number, name: 'agentId' | 'role' | 'description') => {
    const path = `cast.${i}.${name}`;
    const issueId = `${base}-${i}-${name}-issue`;
    return {
      input: {
        value: form.cast[i]![name],
        onInput: (e: { currentTarget: HTMLInputElement }) => setRow(i, { [name]: e.currentTarget.value }),
        ...issueProps(issues, path, issueId),
      },
      issue: <IssueText issues={issues} path={path} id={issueId} />,
    };
  };
  const limit = (name: 'maxDepth' | 'maxParallel') => {
    const path = `delegation.${name}`;
    const issueId = `${base}-${name}-issue`;
    return {
      input: {
        value: form[name],
        onInput: (e: { currentTarget: HTMLInputElement }) => onChange({ ...form, [name]: e.currentTarget.value }),
        ...issueProps(issues, path, issueId),
      },
      issue: <IssueText issues={issues} path={path} id={issueId} />,
    };
  };
  const depth = limit('maxDepth');
  const parallel = limit('maxParallel');

  return (
    <fieldset class="cast wide">
      <legend>Cast: the agents it may delegate to</legend>
      <IssueText issues={issues} path="cast" id={`${base}-cast-issue`} />
      {form.cast.length === 0 && <p class="muted">No roles: the agent is not offered the delegate tool.</p>}
      {form.cast.map((_, i) => {
        const agentId = text(i, 'agentId');
        const role = text(i, 'role');
        const description = text(i, 'description');
        return (
          <fieldset key={i} class="cast-row">
            <legend>Role {i + 1}</legend>
            <div class="field">
              <label>
                Agent id
                <input required {...agentId.input} />
              </label>
              {agentId.issue}
            </div>
            <div class="field">
              <label>
                Role (the agent id when empty)
                <input {...role.input} />
              </label>
              {role.issue}
            </div>
            <div class="field cast-description">
              <label>
                Description
                <input required {...description.input} />
              </label>
              {description.issue}
            </div>
            <label class="checkbox">
              <input type="checkbox" checked={form.cast[i]!.hidden} onChange={(e) => setRow(i, { hidden: e.currentTarget.checked })} />
              Hidden (not listed to the model)
            </label>
            <button type="button" class="small danger" onClick={() => onChange({ ...form, cast: form.cast.filter((_, j) => j !== i) })}>
              Remove role {i + 1}
            </button>
          </fieldset>
        );
      })}
      <button type="button" class="small" onClick={() => onChange({ ...form, cast: [...form.cast, EMPTY_ROW] })}>
        Add a role
      </button>
      <div class="cast-limits">
        <div class="field">
          <label>
            Delegation depth (1–4; 2 when empty)
            <input type="number" min={1} max={4} {...depth.input} />
          </label>
          {depth.issue}
        </div>
        <div class="field">
          <label>
            Delegations at once (1–8; 4 when empty)
            <input type="number" min={1} max={8} {...parallel.input} />
          </label>
          {parallel.issue}
        </div>
      </div>
    </fieldset>
  );
}
