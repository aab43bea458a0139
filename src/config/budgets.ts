/** `[[rate_limiting.budgets]]` as written -> a `Budget` (src/budgets/budget.ts), or what is wrong with it. */
import { type Budget, budgetId } from "../budgets/budget.ts"
import type { RawBudget } from "./raw.ts"
import { scopeConditions } from "./rateLimitRules.ts"

export const configuredBudget = (
  budget: typeof RawBudget.Type
): Budget | { readonly path: ReadonlyArray<string | number>; readonly message: string } => {
  const scope = scopeConditions(budget.scope ?? [])
  if ("path" in scope) return scope
  return { id: budgetId(scope, budget.period, budget.limit), source: "config", scope, period: budget.period, limit: budget.limit }
}
