import { useEffect, useState } from 'preact/hooks';
import type { Schemas } from '../../client/memrag-client.js';
import { type ApiSession, describeError } from './api-session.js';

type Provider = Pick<Schemas['Provider'], 'name' | 'defaultModel'>;

interface Props {
  session: ApiSession;
  /** The agent's provider; empty for the deployment's own (`default`). */
  provider: string;
  model: string;
  onProvider: (provider: string) => void;
  onModel: (model: string) => void;
}

type Offer = { state: 'none' } | { state: 'loading' } | { state: 'listed'; models: string[] } | { state: 'failed'; error: string };

/**
 * An agent's provider and model. The models the provider's own `/models` lists are offered
 * (`GET /v1/providers/{name}/models`, a datalist), and any other name may be typed: a provider
 * that cannot be asked only loses the suggestions, never the form.
 */
export function ModelPicker({ session, provider, model, onProvider, onModel }: Props) {
  const [providers, setProviders] = useState<Provider[]>([]);
  const [offer, setOffer] = useState<Offer>({ state: 'none' });

  useEffect(() => {
    void session.client
      .GET('/v1/providers')
      .then(({ data }) => setProviders(data?.providers ?? []))
      .catch(() => setProviders([]));
  }, []);

  // The deployment's own provider is listed as `default` when it has one.
  const asked = provider || (providers.some((p) => p.name === 'default') ? 'default' : '');
  useEffect(() => {
    if (!asked) return setOffer({ state: 'none' });
    let stale = false;
    setOffer({ state: 'loading' });
    void session.client
      .GET('/v1/providers/{name}/models', { params: { path: { name: asked } } })
      .then(({ data, error, response }) => {
        if (stale) return;
        setOffer(data ? { state: 'listed', models: data.models.map((m) => m.id) } : { state: 'failed', error: describeError(error, response) });
      })
      .catch((err) => !stale && setOffer({ state: 'failed', error: String(err) }));
    return () => void (stale = true);
  }, [asked]);

  const named = providers.filter((p) => p.name !== 'default').map((p) => p.name);
  // An agent's provider the list does not have (it failed, or the deployment changed) stays choosable.
  if (provider && !named.includes(provider)) named.push(provider);
  const defaultModel = providers.find((p) => p.name === (asked || 'default'))?.defaultModel;

  return (
    <>
      <label>
        Provider
        <select value={provider} onChange={(e) => onProvider(e.currentTarget.value)}>
          <option value="">The deployment's</option>
          {named.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Model (the deployment's when empty)
        <input list="agent-models" value={model} onInput={(e) => onModel(e.currentTarget.value)} aria-describedby="agent-models-help" />
      </label>
      <datalist id="agent-models">{offer.state === 'listed' && offer.models.map((id) => <option key={id} value={id} />)}</datalist>
      <span id="agent-models-help" class="muted wide">
        {describeOffer(offer, asked)}
        {defaultModel ? ` Empty: ${defaultModel}.` : ''}
      </span>
    </>
  );
}

function describeOffer(offer: Offer, provider: string): string {
  switch (offer.state) {
    case 'none':
      return 'No provider to ask for its models: type a model name.';
    case 'loading':
      return `Asking ${provider} for its models…`;
    case 'listed':
      return offer.models.length === 0
        ? `${provider} lists no models: type a model name.`
        : `${provider} offers ${offer.models.length} models; any other name may be typed.`;
    case 'failed':
      return `${provider}'s models could not be listed (${offer.error}): type a model name.`;
  }
}
