/**
 * The storage port of budgets set at run time (`/v1/budgets`, src/budgets/runtime.ts): the
 * relational database's `budgets` table (layers/postgres/budgets.ts), one row per workspace,
 * scope and period, with a version every change bumps so that each gateway can tell cheaply
 * whether to read the table again.
 */
import type * as Effect from "effect/Effect"
import type { StoreError } from "../storeError.ts"
import type { BudgetPeriod } from "./budget.ts"

/** what a run-time budget limits, within its workspace */
export type RuntimeScope =
  | { readonly kind: "api_key"; readonly publicId: string }
  | { readonly kind: "workspace" }
  | { readonly kind: "tag"; readonly key: string; readonly value: string }

export interface RuntimeBudget {
  /** a UUID, kept when the limit is changed */
  readonly id: string
  readonly workspace: string
  readonly scope: RuntimeScope
  readonly period: BudgetPeriod
  readonly limit: number
  /** epoch ms */
  readonly updatedAt: number
  /** who set it last: a key's public id, or the command line's OS user */
  readonly updatedBy?: string | undefined
}

export interface BudgetStore {
  /** the table's version: it changes with every insert, update and delete */
  readonly version: Effect.Effect<string, StoreError>
  /** every budget (`workspace` undefined), or one workspace's; oldest first */
  readonly list: (workspace?: string | undefined) => Effect.Effect<ReadonlyArray<RuntimeBudget>, StoreError>
  /** sets the budget of its workspace, scope and period: a new row with `id`, or the existing row's limit (its id kept) */
  readonly upsert: (budget: Omit<RuntimeBudget, "updatedAt">) => Effect.Effect<RuntimeBudget, StoreError>
  /** deletes the budget `id` of `workspace`; undefined when that workspace has none with that id */
  readonly remove: (id: string, workspace: string) => Effect.Effect<RuntimeBudget | undefined, StoreError>
}
