import type { AgentSettings } from './agent-config.js';

/** What of the deployment's configuration an agent's settings must agree with. */
export interface AgentDeployment {
  /** LLM_PROVIDERS, by name. */
  providers: Readonly<Record<string, unknown>>;
  /** LLM_PRICES, by model. */
  prices: Readonly<Record<string, unknown>>;
  /** LLM_MODEL: the model of an agent that names none. */
  defaultModel: string | undefined;
}

export interface SettingsIssue {
  path: string;
  message: string;
}

/**
 * Settings the schema accepts but this deployment could not run: a provider it does not have, a
 * budget in dollars for a model it has no price for. `changed`: the fields a request set, so that
 * a later configuration change does not make an agent unchangeable in fields it does not touch.
 */
export function deploymentIssues(settings: AgentSettings, deployment: AgentDeployment, changed: ReadonlySet<string> | 'all' = 'all'): SettingsIssue[] {
  const touched = (field: keyof AgentSettings) => changed === 'all' || changed.has(field);
  const issues: SettingsIssue[] = [];
  if (settings.provider !== undefined && touched('provider') && !Object.hasOwn(deployment.providers, settings.provider)) {
    const names = Object.keys(deployment.providers);
    issues.push({
      path: 'provider',
      message: `is not a provider of this server (LLM_PROVIDERS: ${names.length > 0 ? names.map((n) => JSON.stringify(n)).join(', ') : 'none configured'})`,
    });
  }
  if (settings.budget?.maxUsd !== undefined && (touched('budget') || touched('model'))) {
    const model = settings.model ?? deployment.defaultModel;
    if (model === undefined) {
      issues.push({ path: 'budget.maxUsd', message: 'needs a model with a price in LLM_PRICES: the agent names no model and LLM_MODEL is unset' });
    } else if (!Object.hasOwn(deployment.prices, model)) {
      issues.push({ path: 'budget.maxUsd', message: `needs a price for the model ${JSON.stringify(model)} in LLM_PRICES` });
    }
  }
  return issues;
}
