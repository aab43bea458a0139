/**
 * The budgets in force, as `BudgetTable` (src/budgets/budget.ts) gives them: those of the
 * configuration. The one place the table is made from them, at start-up (layers/access.ts) and
 * on a reload (layers/reload.ts), so that run-time budgets can be merged in here.
 */
import { type Budget, BudgetTable } from "../src/budgets/budget.ts"

export const budgetTableOf = (configured: ReadonlyArray<Budget>): BudgetTable["Service"] =>
  configured.length === 0 ? BudgetTable.none : BudgetTable.of({ current: () => configured })
