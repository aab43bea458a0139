/**
 * Budgets set at run time on Postgres (`BudgetStore` of src/budgets/runtimeStore.ts): the
 * `budgets` table and its one-row `budgets_version`, bumped by a trigger on every change
 * (migrations/postgres/0026_budgets.sql). A workspace scope has '' for its key and value, an API
 * key scope '' for its key, so that the unique (workspace, scope, period) holds for them too.
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import * as Effect from "effect/Effect"
import type { BudgetPeriod } from "../../src/budgets/budget.ts"
import type { BudgetStore, RuntimeBudget, RuntimeScope } from "../../src/budgets/runtimeStore.ts"
import { storeError } from "./client.ts"

interface BudgetRow {
  readonly id: string
  readonly workspace: string
  readonly scope_kind: RuntimeScope["kind"]
  readonly scope_key: string
  readonly scope_value: string
  readonly period: BudgetPeriod
  readonly limit_amount: number
  readonly updated_at: Date
  readonly updated_by: string | null
}

const scopeOf = (row: BudgetRow): RuntimeScope =>
  row.scope_kind === "api_key"
    ? { kind: "api_key", publicId: row.scope_value }
    : row.scope_kind === "workspace"
    ? { kind: "workspace" }
    : { kind: "tag", key: row.scope_key, value: row.scope_value }

const toBudget = (row: BudgetRow): RuntimeBudget => ({
  id: row.id,
  workspace: row.workspace,
  scope: scopeOf(row),
  period: row.period,
  limit: Number(row.limit_amount),
  updatedAt: row.updated_at.getTime(),
  ...(row.updated_by !== null && { updatedBy: row.updated_by })
})

/** the scope's key and value columns */
const columnsOf = (scope: RuntimeScope): readonly [string, string] =>
  scope.kind === "api_key" ? ["", scope.publicId] : scope.kind === "workspace" ? ["", ""] : [scope.key, scope.value]

/** Postgres text holds no NUL */
const text = (value: string) => value.replaceAll("\0", "\uFFFD")

const columns = "id, workspace, scope_kind, scope_key, scope_value, period, limit_amount, updated_at, updated_by"

export const makePostgresBudgetStore = (sql: PgClient.PgClient): BudgetStore => ({
  version: sql<{ readonly version: string }>`SELECT version::text AS version FROM budgets_version`.pipe(
    Effect.map((rows) => rows[0]?.version ?? "0"),
    Effect.mapError(storeError("read budgets version"))
  ),

  list: (workspace) =>
    sql<BudgetRow>`SELECT ${sql.literal(columns)} FROM budgets
      ${workspace === undefined ? sql`` : sql`WHERE workspace = ${workspace}`}
      ORDER BY updated_at, id`.pipe(
      Effect.map((rows) => rows.map(toBudget)),
      Effect.mapError(storeError("list budgets"))
    ),

  upsert: (budget) => {
    const [key, value] = columnsOf(budget.scope)
    return sql<BudgetRow>`
      INSERT INTO budgets (id, workspace, scope_kind, scope_key, scope_value, period, limit_amount, updated_at, updated_by)
      VALUES (${budget.id}, ${budget.workspace}, ${budget.scope.kind}, ${text(key)}, ${text(value)}, ${budget.period}, ${budget.limit},
        now(), ${budget.updatedBy === undefined ? null : text(budget.updatedBy)})
      ON CONFLICT (workspace, scope_kind, scope_key, scope_value, period)
      DO UPDATE SET limit_amount = EXCLUDED.limit_amount, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by
      RETURNING ${sql.literal(columns)}`.pipe(
      Effect.map((rows) => toBudget(rows[0])),
      Effect.mapError(storeError("set budget"))
    )
  },

  remove: (id, workspace) =>
    sql<BudgetRow>`DELETE FROM budgets WHERE id = ${id}::uuid AND workspace = ${workspace} RETURNING ${sql.literal(columns)}`.pipe(
      Effect.map((rows) => rows[0] === undefined ? undefined : toBudget(rows[0])),
      Effect.mapError(storeError("delete budget"))
    )
})
