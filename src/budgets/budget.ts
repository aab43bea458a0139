/**
 * Budgets (docs/budgets.md): a spend limit, in the currency of the providers' prices, for the
 * calls whose scope holds (an API key, a workspace, a tag, or several at once), over a calendar
 * period in UTC (a day, a week from Monday, a month) or a fixed total. Unlike the rolling
 * `cost_per_<period>` rate limits, a budget's spend is counted per period and read back: a
 * limit changed at run time applies at once, and `resets_at` is the period's end.
 *
 * Budgets come from the configuration (`[[rate_limiting.budgets]]`) and from admins at run time
 * (`/v1/budgets`, kept in the relational database); `BudgetTable` holds the current list. Every
 * budget whose scope holds applies (no priorities): a call must fit all of them. Pure.
 */
import { createHash } from "node:crypto"
import * as Context from "effect/Context"
import { holds, type RequestScope, type ScopeCondition, scopeValues } from "../ratelimit/rules.ts"

export const budgetPeriods = ["day", "week", "month", "total"] as const
export type BudgetPeriod = typeof budgetPeriods[number]

export interface Budget {
  /** stable from the definition (config) or the row's id (run time) */
  readonly id: string
  /** `config` (`rate_limiting.budgets[i]`) or `runtime` (set through /v1/budgets) */
  readonly source: "config" | "runtime"
  /** every condition must hold for a call to count against the budget */
  readonly scope: ReadonlyArray<ScopeCondition>
  readonly period: BudgetPeriod
  /** the most a period may spend, in the providers' currency */
  readonly limit: number
}

export const budgetId = (scope: ReadonlyArray<ScopeCondition>, period: BudgetPeriod, limit: number): string =>
  createHash("sha256").update(JSON.stringify(["budget", scope, period, limit])).digest("hex").slice(0, 16)

/** The budgets a call counts against: every one whose scope holds. An empty list answers at once (the hot path without budgets). */
export const applicableBudgets = (budgets: ReadonlyArray<Budget>, request: RequestScope): ReadonlyArray<Budget> =>
  budgets.length === 0 ? budgets : budgets.filter((budget) => budget.scope.every((condition) => holds(condition, request)))

/**
 * The key of the budget's counter for this request, without the period (the store adds the
 * period it computes from its own clock): one counter per key, workspace or tag value under
 * `gateway::each`, one for all otherwise. Not the limit: a limit changed keeps its spend.
 */
export const budgetCounterKey = (budget: Budget, request: RequestScope): string =>
  `${counterPrefixOf(budget)}${createHash("sha256").update(scopeValues(budget.scope, request).join("\u0000")).digest("hex").slice(0, 24)}`

/** `budget:<id of the scope and period>:`, made once per budget (a budget is read on every call it applies to) */
const counterPrefixes = new WeakMap<Budget, string>()
const counterPrefixOf = (budget: Budget): string => {
  let prefix = counterPrefixes.get(budget)
  if (prefix === undefined) {
    prefix = `budget:${budgetId(budget.scope, budget.period, 0)}:`
    counterPrefixes.set(budget, prefix)
  }
  return prefix
}

/** `{kind, value}` as the 429's `budget.scope` shows it: the first condition, or `every request` */
export const shownScope = (budget: Budget, request: RequestScope): { readonly kind: string; readonly value: string } => {
  const condition = budget.scope[0]
  if (condition === undefined) return { kind: "all", value: "every request" }
  if (condition.kind === "api_key") return { kind: "api_key", value: request.publicId ?? "" }
  if (condition.kind === "workspace") return { kind: "workspace", value: request.workspace }
  return { kind: "tag", value: `${condition.key}=${request.tags[condition.key] ?? ""}` }
}

/** `workspace:acme/month`: the budget's label in metrics and log lines (bounded by the budgets, each value under `gateway::each`) */
export const budgetLabel = (budget: Budget, request: RequestScope): string => {
  const shown = shownScope(budget, request)
  return `${shown.kind}:${shown.value}/${budget.period}`
}

/** The budgets in force: those of the configuration and those set at run time, as last read. */
export class BudgetTable extends Context.Service<BudgetTable, {
  /** the current list; read on every model call, so it must answer from memory */
  readonly current: () => ReadonlyArray<Budget>
}>()("gateway/BudgetTable") {
  static readonly none = BudgetTable.of({ current: () => [] })
}
