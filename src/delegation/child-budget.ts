import type { Agent, AgentSettings } from '../agents/agent-config.js';
import { costUsd, type PriceTable } from '../llm/pricing.js';
import type { RunUsage } from '../runs/run-types.js';

export interface BudgetContext {
  prices: PriceTable | undefined;
  /** LLM_MODEL: the model of an agent that names none. */
  defaultModel: string | undefined;
}

/** Thrown (and told to the model) when nothing is left of the parent's budget for a child. */
export class BudgetSpentError extends Error {
  constructor(what: string) {
    super(`budget: the lead's ${what} budget is spent, nothing is left for a delegation`);
    this.name = 'BudgetSpentError';
  }
}

/** The parent's own calls' dollar cost by the price table; null when its model has no price. */
export function parentCostOf(usage: RunUsage, parent: AgentSettings | null, context: BudgetContext): number | null {
  const model = parent?.model ?? context.defaultModel;
  return context.prices && model ? (costUsd(context.prices, model, usage) ?? null) : null;
}

/** What a child's bound holds back from the parent's budget while the child runs. */
export function reservationOf(agent: Agent | null): { usage: RunUsage; costUsd: number | null } {
  const budget = agent?.budget;
  return {
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: budget?.maxTokens ?? 0 },
    costUsd: budget?.maxUsd ?? null,
  };
}

/**
 * The role's agent with its budget bounded by what is left of the parent's: the smaller of the
 * two, field by field. A dollar bound is set only where the child's model has a price (a cost
 * budget without one refuses to run). `spent`: the parent's own calls and its ended children's.
 */
export function boundedAgent(
  child: Agent | null,
  childId: string,
  parent: AgentSettings | null,
  spent: { usage: RunUsage; costUsd: number | null },
  context: BudgetContext,
): Agent | null {
  const budget = parent?.budget;
  if (!budget) return child;
  const parentModel = parent?.model ?? context.defaultModel;
  const parentCost = spent.costUsd ?? (context.prices && parentModel ? (costUsd(context.prices, parentModel, spent.usage) ?? 0) : 0);
  const tokensLeft = budget.maxTokens !== undefined ? budget.maxTokens - spent.usage.totalTokens : undefined;
  const usdLeft = budget.maxUsd !== undefined ? budget.maxUsd - parentCost : undefined;
  if (tokensLeft !== undefined && tokensLeft <= 0) throw new BudgetSpentError('token');
  if (usdLeft !== undefined && usdLeft <= 0) throw new BudgetSpentError('cost');
  const own = child?.budget;
  const childModel = child?.model ?? context.defaultModel;
  const priced = childModel !== undefined && context.prices?.[childModel] !== undefined;
  const maxTokens = min(own?.maxTokens, tokensLeft);
  const maxUsd = priced ? min(own?.maxUsd, usdLeft) : own?.maxUsd;
  const bounded = { ...(maxTokens !== undefined ? { maxTokens } : {}), ...(maxUsd !== undefined ? { maxUsd } : {}) };
  // An agent with no record runs on the deployment's defaults: a record of its own carries the bound.
  const base: Agent = child ?? { id: childId, name: childId, version: 0, createdAt: new Date(0), updatedAt: new Date(0) };
  return { ...base, ...(Object.keys(bounded).length > 0 ? { budget: bounded } : {}) };
}

function min(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}
