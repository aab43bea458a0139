/**
 * `/v1/budgets`: the budgets of the caller's workspace (an admin's; a global admin's on the
 * `gateway-workspace` header's workspace): those set at run time, which `PUT` sets (one per
 * scope and period: a second PUT changes the limit) and `DELETE` removes, and the
 * configuration's that can hold in the workspace, read-only. See src/budgets/runtime.ts.
 */
import * as Schema from "effect/Schema"

/** checked by src/budgets/runtime.ts (`budgetPeriods`), which this layer of the contract does not import */
const Period = Schema.String.annotate({ description: "day, week (from Monday) or month in UTC, or total (a fixed amount)" })

export const BudgetCondition = Schema.Struct({
  kind: Schema.Literals(["api_key", "workspace", "tag"]),
  key: Schema.optional(Schema.String.annotate({ description: "a tag's key" })),
  value: Schema.String.annotate({ description: "a key's public id, a workspace, a tag's value, or `gateway::each` (each its own budget)" })
}).annotate({ identifier: "BudgetCondition" })
export type BudgetCondition = typeof BudgetCondition.Type

export const BudgetJson = Schema.Struct({
  id: Schema.String.annotate({ description: "a run-time budget's UUID; a configuration budget's hash of its definition" }),
  source: Schema.Literals(["runtime", "config"]).annotate({ description: "set through /v1/budgets, or `[[rate_limiting.budgets]]` (read-only here)" }),
  scope: Schema.Array(BudgetCondition).annotate({ description: "every condition must hold for a call to count against the budget" }),
  period: Period,
  limit: Schema.Finite.annotate({ description: "the most a period may spend, in the providers' currency" }),
  updated_at: Schema.NullOr(Schema.String.annotate({ format: "date-time" })).annotate({ description: "when a run-time budget was set last (null for a configuration budget)" }),
  updated_by: Schema.NullOr(Schema.String).annotate({ description: "who set it: a key's public id, or the command line's OS user" })
}).annotate({ identifier: "Budget" })
export type BudgetJson = typeof BudgetJson.Type

export const BudgetList = Schema.Struct({ budgets: Schema.Array(BudgetJson) }).annotate({ identifier: "BudgetList" })
export type BudgetList = typeof BudgetList.Type

export const SetBudgetRequest = Schema.Struct({
  scope: Schema.Struct({
    kind: Schema.String.annotate({ description: "`api_key` (a key of the workspace), `workspace` (the caller's), or `tag` (a tag of the workspace's calls)" }),
    key: Schema.optional(Schema.String.annotate({ description: "a tag scope's key" })),
    value: Schema.optional(Schema.String.annotate({ description: "an api_key scope's public id, a tag scope's value (or `gateway::each`)" }))
  }),
  period: Period,
  limit: Schema.Finite.annotate({ description: "the most a period may spend, in the providers' currency (0 or more)" })
}).annotate({ identifier: "SetBudgetRequest" })
export type SetBudgetRequest = typeof SetBudgetRequest.Type
