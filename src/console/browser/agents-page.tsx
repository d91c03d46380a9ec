import { useEffect, useState } from 'preact/hooks';
import type { JsonBody, Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';
import { type CastForm, CastEditor, castFormOf, castOf, delegationOf } from './cast-editor.js';
import { type FieldIssues, fieldIssuesOf } from './field-issues.js';
import { ModelPicker } from './model-picker.js';
import { ScrollTable } from './scroll-table.js';
import { StatusLine } from './status-line.js';
import { useStatus } from './use-status.js';

type Agent = Schemas['Agent'];

/** The settings the console edits; the others (tools, budget, recall…) stay as the API last set them. */
interface AgentForm {
  id: string;
  name: string;
  instructions: string;
  provider: string;
  model: string;
  temperature: string;
  maxIterations: string;
  crew: CastForm;
}

const EMPTY: AgentForm = { id: '', name: '', instructions: '', provider: '', model: '', temperature: '', maxIterations: '', crew: castFormOf() };

function formOf(agent: Agent): AgentForm {
  return {
    id: agent.id,
    name: agent.name,
    instructions: agent.instructions ?? '',
    provider: agent.provider ?? '',
    model: agent.model ?? '',
    temperature: agent.temperature === undefined ? '' : String(agent.temperature),
    maxIterations: agent.maxIterations === undefined ? '' : String(agent.maxIterations),
    crew: castFormOf(agent),
  };
}

/** Agents: list, create, edit (each edit is a new version) and each one's versions. */
export function AgentsPage({ session, onUseAgent }: { session: ApiSession; onUseAgent: (agentId: string) => void }) {
  const { status, say, fail } = useStatus();
  const [agents, setAgents] = useState<Agent[]>([]);
  const [editing, setEditing] = useState<Agent | 'new' | undefined>(undefined);
  const [form, setForm] = useState<AgentForm>(EMPTY);
  const [versions, setVersions] = useState<{ agent: Agent; items: Schemas['AgentVersion'][] } | undefined>(undefined);
  const [refresh, setRefresh] = useState(0);
  // The fields the API rejected on the last save, marked beside each (the cast's rows above all).
  const [issues, setIssues] = useState<FieldIssues>({});

  // A reply that a newer load overtook is dropped, so a slow first load cannot hide a saved agent.
  useEffect(() => {
    let stale = false;
    void session.client.GET('/v1/agents', { params: { query: { limit: 100 } } }).then(({ data, error, response }) => {
      if (stale) return;
      if (error) fail(describeError(error, response));
      else setAgents(data.items);
    });
    return () => void (stale = true);
  }, [refresh]);

  const edit = (agent: Agent | 'new') => {
    setEditing(agent);
    setForm(agent === 'new' ? EMPTY : formOf(agent));
    setIssues({});
  };

  const field = (name: Exclude<keyof AgentForm, 'crew'>) => ({
    value: form[name],
    onInput: (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) => setForm({ ...form, [name]: e.currentTarget.value }),
  });

  const save = async (e: Event) => {
    e.preventDefault();
    const number = (text: string) => (text.trim() === '' ? undefined : Number(text));
    const refused = (error: unknown, response: Response) => {
      setIssues(fieldIssuesOf(error));
      fail(describeError(error, response));
    };
    const cast = castOf(form.crew);
    const delegation = delegationOf(form.crew);
    if (editing === 'new') {
      const body: JsonBody<'createAgent'> = {
        name: form.name,
        ...(form.id.trim() ? { id: form.id.trim() } : {}),
        ...(form.instructions ? { instructions: form.instructions } : {}),
        ...(form.provider ? { provider: form.provider } : {}),
        ...(form.model.trim() ? { model: form.model.trim() } : {}),
        ...(number(form.temperature) === undefined ? {} : { temperature: number(form.temperature)! }),
        ...(number(form.maxIterations) === undefined ? {} : { maxIterations: number(form.maxIterations)! }),
        ...(cast.length === 0 ? {} : { cast }),
        ...(delegation ? { delegation } : {}),
      };
      const { data, error, response } = await session.client.POST('/v1/agents', { body });
      if (error) return refused(error, response);
      say(`Created ${data.name} (${data.id})`);
    } else if (editing) {
      // Emptied fields are cleared (null): the deployment's default applies again.
      const body: JsonBody<'patchAgent'> = {
        name: form.name,
        instructions: form.instructions || null,
        // Sent only when changed: a provider the deployment has since dropped is refused, and stays until someone picks another.
        ...(form.provider === (editing.provider ?? '') ? {} : { provider: form.provider || null }),
        model: form.model.trim() || null,
        temperature: number(form.temperature) ?? null,
        maxIterations: number(form.maxIterations) ?? null,
        cast: cast.length === 0 ? null : cast,
        delegation: delegation ?? null,
      };
      const { data, error, response } = await session.client.PATCH('/v1/agents/{id}', { params: { path: { id: editing.id } }, body });
      if (error) return refused(error, response);
      say(`Saved ${data.name}: version ${data.version}`);
    }
    setEditing(undefined);
    setIssues({});
    setRefresh((n) => n + 1);
  };

  const showVersions = async (agent: Agent) => {
    const { data, error, response } = await session.client.GET('/v1/agents/{id}/versions', { params: { path: { id: agent.id }, query: { limit: 50 } } });
    if (error) return fail(describeError(error, response));
    setVersions({ agent, items: data.items });
  };

  return (
    <div class="page">
      <div class="page-head">
        <h1>Agents</h1>
        <button type="button" onClick={() => edit('new')}>
          New agent
        </button>
      </div>
      <StatusLine status={status} />
      {editing && (
        <section class="panel" aria-labelledby="agent-form-title">
          <h2 id="agent-form-title">{editing === 'new' ? 'New agent' : `Edit ${editing.name}`}</h2>
          <form class="grid-form" onSubmit={save}>
            {editing === 'new' && (
              <label>
                Id (optional; the agentId of its memories)
                <input {...field('id')} />
              </label>
            )}
            <label>
              Name
              <input required {...field('name')} />
            </label>
            <ModelPicker
              session={session}
              provider={form.provider}
              model={form.model}
              onProvider={(provider) => setForm({ ...form, provider })}
              onModel={(model) => setForm({ ...form, model })}
            />
            <label>
              Temperature
              <input type="number" step="0.1" min="0" max="2" {...field('temperature')} />
            </label>
            <label>
              Max iterations
              <input type="number" min="1" {...field('maxIterations')} />
            </label>
            <label class="wide">
              Instructions
              <textarea rows={4} {...field('instructions')} />
            </label>
            <CastEditor form={form.crew} onChange={(crew) => setForm({ ...form, crew })} issues={issues} />
            <div class="actions wide">
              <button type="submit">Save agent</button>
              <button type="button" onClick={() => setEditing(undefined)}>
                Cancel
              </button>
            </div>
          </form>
        </section>
      )}
      <ScrollTable caption="Agents">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Id</th>
            <th scope="col">Version</th>
            <th scope="col">Model</th>
            <th scope="col">Updated</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => (
            <tr key={a.id}>
              <td>{a.name}</td>
              <td>
                <code>{a.id}</code>
              </td>
              <td>{a.version}</td>
              <td>{a.model ?? 'default'}</td>
              <td>
                <time dateTime={a.updatedAt}>{new Date(a.updatedAt).toLocaleString()}</time>
              </td>
              <td class="actions">
                <button type="button" class="small" onClick={() => edit(a)} aria-label={`Edit ${a.name}`}>
                  Edit
                </button>
                <button type="button" class="small" onClick={() => void showVersions(a)} aria-label={`Versions of ${a.name}`}>
                  Versions
                </button>
                <button type="button" class="small" onClick={() => onUseAgent(a.id)} aria-label={`Use ${a.name} in memories and chat`}>
                  Use
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </ScrollTable>
      {agents.length === 0 && <p>No agents yet: chats use agent id “default” with the deployment's settings.</p>}
      {versions && (
        <section class="panel" aria-labelledby="versions-title">
          <h2 id="versions-title">Versions of {versions.agent.name}</h2>
          <ol class="versions">
            {versions.items.map((v) => (
              <li key={v.version}>
                <strong>Version {v.version}</strong>, <time dateTime={v.createdAt}>{new Date(v.createdAt).toLocaleString()}</time>
                <pre>{JSON.stringify(v.settings, null, 2)}</pre>
              </li>
            ))}
          </ol>
        </section>
      )}
    </div>
  );
}
