/**
 * `gateway budget list|set|delete --workspace <name>`: a workspace's budgets set at run time
 * (src/budgets/runtime.ts), the same objects `/v1/budgets` answers, on the relational database;
 * the gateways hold a change within their poll interval. The operator's tool: no key, any
 * workspace; `set` and `delete` are recorded in the audit log as the command line's acts.
 * The configuration's budgets are not listed (the command reads no configuration).
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { makeAuditLog } from "../../src/audit/service.ts"
import { keyStoreMissing } from "../../src/auth/keyAdministration.ts"
import { type BudgetAdministration, makeRuntimeBudgets } from "../../src/budgets/runtime.ts"
import { uuidv7 } from "../../src/ids.ts"
import type { RelationalStore } from "../../src/relational.ts"
import { workspaceNameProblem } from "../../src/workspace.ts"
import { configuredRelationalStore, migrateRelationalStore } from "../access.ts"
import { runtimeBudgetJson } from "../http/budgets.ts"
import { type LogFormat, LoggingLive } from "../logging.ts"
import { StartupError } from "../startup.ts"
import { operator } from "./apiKeys.ts"
import { commandEnv } from "./configuration.ts"
import { failWith } from "./exit.ts"

export interface BudgetSetFlags {
  readonly workspace: string
  readonly scope: string
  readonly key: Option.Option<string>
  readonly value: Option.Option<string>
  readonly period: string
  readonly limit: string
}

/** the relational database, migrated, and the budgets' administration on it */
const administration = (): Effect.Effect<
  { readonly store: RelationalStore; readonly budgets: BudgetAdministration["Service"] },
  StartupError,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const store = yield* configuredRelationalStore(yield* commandEnv)
    if (store === undefined) return yield* new StartupError({ message: keyStoreMissing.replace("API keys live", "budgets set at run time live") })
    yield* migrateRelationalStore(store)
    const { administration: budgets } = yield* Effect.mapError(
      makeRuntimeBudgets({
        configBudgets: [],
        store: store.budgets,
        keyWorkspace: (publicId) => Effect.map(store.keys.find(publicId), (key) => key?.workspace),
        newId: () => uuidv7(Date.now())
      }),
      (error) => new StartupError({ message: `could not read the budgets: ${error.message}` })
    )
    return { store, budgets }
  })

const recorded = (store: RelationalStore, act: { readonly action: string; readonly target: string; readonly workspace: string }) =>
  makeAuditLog(store.audit, Date.now).record({ ...act, actorKind: "cli", actor: operator(), outcome: "success" })

/** runs `program` with the workspace checked: a bad input exits 2, anything else that failed 1 */
const command = <A>(
  workspace: string,
  logFormat: LogFormat,
  program: (administration: { readonly store: RelationalStore; readonly budgets: BudgetAdministration["Service"] }) => Effect.Effect<A, unknown, Scope.Scope>
) => {
  const problem = workspaceNameProblem(workspace, "--workspace")
  if (problem !== undefined) return failWith(2, [problem])
  return Effect.flatMap(administration(), program).pipe(
    Effect.scoped,
    Effect.catch((error: any) =>
      failWith(error?._tag === "InvalidRequest" ? 2 : 1, [typeof error?.message === "string" ? error.message : String(error)])
    ),
    Effect.provide(LoggingLive(logFormat))
  )
}

export const budgetList = (workspace: string, logFormat: LogFormat) =>
  command(workspace, logFormat, ({ budgets }) =>
    Effect.gen(function*() {
      const { runtime } = yield* budgets.list(workspace)
      for (const budget of runtime) yield* Console.log(JSON.stringify(runtimeBudgetJson(budget)))
    }))

export const budgetSet = (flags: BudgetSetFlags, logFormat: LogFormat) => {
  const limit = Number(flags.limit)
  if (flags.limit.trim() === "" || !Number.isFinite(limit)) return failWith(2, [`--limit: expected an amount, got "${flags.limit}"`])
  return command(flags.workspace, logFormat, ({ budgets, store }) =>
    Effect.gen(function*() {
      const request = { scope: { kind: flags.scope, key: Option.getOrUndefined(flags.key), value: Option.getOrUndefined(flags.value) }, period: flags.period, limit }
      const budget = yield* budgets.set(flags.workspace, request, operator())
      yield* recorded(store, { action: "budget.set", target: budget.id, workspace: flags.workspace })
      yield* Console.log(JSON.stringify(runtimeBudgetJson(budget)))
    }))
}

export const budgetDelete = (id: string, workspace: string, logFormat: LogFormat) =>
  command(workspace, logFormat, ({ budgets, store }) =>
    Effect.gen(function*() {
      const removed = yield* budgets.remove(workspace, id)
      yield* recorded(store, { action: "budget.delete", target: id, workspace })
      yield* Console.log(JSON.stringify(runtimeBudgetJson(removed)))
    }))
