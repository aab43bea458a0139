/**
 * Budgets set at run time (docs/budgets.md, "Setting budgets at run time"): an admin sets, lists
 * and deletes its workspace's budgets (`/v1/budgets`, `gateway budget`), kept in the relational
 * database; `BudgetTable` merges them with the configuration's. The table answers from memory:
 * each process reads the database's budgets again when their version moved (polled every 2 s,
 * as LISTEN does not work behind PgBouncer) and at once after a change it made itself. So a limit
 * set on one gateway holds on every other within the poll interval; the spend is shared anyway.
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import { InvalidRequest, NotFound, ServiceUnavailable } from "../errors.ts"
import { isUuid } from "../ids.ts"
import { eachValue, type ScopeCondition } from "../ratelimit/rules.ts"
import type { StoreError } from "../storeError.ts"
import { type Budget, type BudgetPeriod, budgetPeriods, BudgetTable } from "./budget.ts"
import type { BudgetStore, RuntimeBudget, RuntimeScope } from "./runtimeStore.ts"

/** how often each process asks whether the database's budgets changed */
export const budgetPollInterval = Duration.seconds(2)

/** the scope conditions of a run-time budget: always within its workspace (an API key belongs to one) */
export const conditionsOf = (budget: Pick<RuntimeBudget, "workspace" | "scope">): ReadonlyArray<ScopeCondition> => {
  const scope = budget.scope
  if (scope.kind === "api_key") return [{ kind: "api_key", publicId: scope.publicId }]
  if (scope.kind === "workspace") return [{ kind: "workspace", workspace: budget.workspace }]
  return [{ kind: "workspace", workspace: budget.workspace }, { kind: "tag", key: scope.key, value: scope.value }]
}

export const budgetOfRuntime = (budget: RuntimeBudget): Budget => ({
  id: budget.id,
  source: "runtime",
  scope: conditionsOf(budget),
  period: budget.period,
  limit: budget.limit
})

/** whether a configuration budget can hold for a call of `workspace` (its workspace conditions admit it) */
export const appliesToWorkspace = (budget: Budget, workspace: string): boolean =>
  budget.scope.every((condition) => condition.kind !== "workspace" || condition.workspace === eachValue || condition.workspace === workspace)

/** The budget a PUT asks for, as written (the wire's names), before it is checked. */
export interface BudgetRequest {
  readonly scope: { readonly kind: string; readonly key?: string | undefined; readonly value?: string | undefined }
  readonly period: string
  readonly limit: number
}

/** a tag's key or value in a budget: bounded, as tags are */
const tagTextMax = 200

const invalid = (message: string) => Result.fail(new InvalidRequest({ message }))

/** the scope, period and limit `request` asks for, or the 400 naming the field at fault */
export const checkBudgetRequest = (
  request: BudgetRequest
): Result.Result<{ readonly scope: RuntimeScope; readonly period: BudgetPeriod; readonly limit: number }, InvalidRequest> => {
  const { kind, key, value } = request.scope
  let scope: RuntimeScope
  if (kind === "workspace") {
    if (key !== undefined || value !== undefined) return invalid("scope: a workspace scope has no key nor value (it is the caller's workspace)")
    scope = { kind }
  } else if (kind === "api_key") {
    if (key !== undefined) return invalid("scope.key: an api_key scope has no key, only a value (the key's public id)")
    if (value === undefined || value === "") return invalid("scope.value: the public id of an API key of the workspace is required")
    scope = { kind, publicId: value }
  } else if (kind === "tag") {
    if (key === undefined || key === "" || key.length > tagTextMax) return invalid(`scope.key: the tag's key is required (1 to ${tagTextMax} characters)`)
    if (value === undefined || value === "" || value.length > tagTextMax) {
      return invalid(`scope.value: the tag's value is required (1 to ${tagTextMax} characters, or "${eachValue}": each value its own budget)`)
    }
    scope = { kind, key, value }
  } else {
    return invalid(`scope.kind: "${kind.slice(0, 40)}" is none of api_key, workspace, tag`)
  }
  if (!(budgetPeriods as ReadonlyArray<string>).includes(request.period)) {
    return invalid(`period: "${request.period.slice(0, 40)}" is none of ${budgetPeriods.join(", ")}`)
  }
  if (!Number.isFinite(request.limit) || request.limit < 0) return invalid("limit: a non-negative amount, in the providers' currency")
  return Result.succeed({ scope, period: request.period as BudgetPeriod, limit: request.limit })
}

/** What an admin does with its workspace's budgets. */
export class BudgetAdministration extends Context.Service<BudgetAdministration, {
  /** the configuration's budgets that can hold in `workspace` (read-only), and the workspace's run-time ones this process holds (as last read) */
  readonly list: (workspace: string) => Effect.Effect<
    { readonly config: ReadonlyArray<Budget>; readonly runtime: ReadonlyArray<RuntimeBudget> },
    ServiceUnavailable
  >
  /** sets (creates or changes) the workspace's budget of that scope and period; an API key of another workspace is a 404 */
  readonly set: (
    workspace: string,
    request: BudgetRequest,
    updatedBy: string | undefined
  ) => Effect.Effect<RuntimeBudget, InvalidRequest | NotFound | ServiceUnavailable>
  /** deletes the workspace's budget `id` (another workspace's is a 404, as an unknown one) */
  readonly remove: (workspace: string, id: string) => Effect.Effect<RuntimeBudget, InvalidRequest | NotFound | ServiceUnavailable>
  /** replaces the configuration's budgets (a reloaded configuration's), kept beside the run-time ones */
  readonly configure: (configBudgets: ReadonlyArray<Budget>) => void
}>()("gateway/BudgetAdministration") {}

const noDatabase = new ServiceUnavailable({ message: "budgets set at run time live in the relational database: set GATEWAY_RELATIONAL_DB_URL" })

const unavailable = (error: StoreError) => new ServiceUnavailable({ message: `the relational database is unavailable: ${error.message}` })

export interface RuntimeBudgetsOptions {
  /** `[[rate_limiting.budgets]]`, as configured */
  readonly configBudgets: ReadonlyArray<Budget>
  /** undefined without a relational database: the configuration's budgets only */
  readonly store: BudgetStore | undefined
  /** the workspace of an API key, undefined for no such key */
  readonly keyWorkspace: (publicId: string) => Effect.Effect<string | undefined, StoreError>
  readonly newId: () => string
  readonly pollInterval?: Duration.Input | undefined
}

/**
 * The `BudgetTable` and the `BudgetAdministration` of one process. Reads the database's budgets
 * once (a failure is the caller's start-up error), then polls their version for as long as the
 * scope lasts; a failed poll is logged and tried again at the next one.
 */
export const makeRuntimeBudgets = (
  options: RuntimeBudgetsOptions
): Effect.Effect<{ readonly table: BudgetTable["Service"]; readonly administration: BudgetAdministration["Service"] }, StoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const { store } = options
    let configBudgets = options.configBudgets
    let rows: ReadonlyArray<RuntimeBudget> = []
    let current: ReadonlyArray<Budget> = configBudgets
    // without any run-time budget the list is the configuration's (empty when it has none: the hot path skips budgets at once)
    const merge = () => {
      current = rows.length === 0 ? configBudgets : [...configBudgets, ...rows.map(budgetOfRuntime)]
    }
    const configure = (budgets: ReadonlyArray<Budget>) => {
      configBudgets = budgets
      merge()
    }
    const table = BudgetTable.of({ current: () => current })
    const listConfig = (workspace: string) => configBudgets.filter((budget) => appliesToWorkspace(budget, workspace))
    if (store === undefined) {
      return {
        table,
        administration: BudgetAdministration.of({
          list: (workspace) => Effect.succeed({ config: listConfig(workspace), runtime: [] }),
          set: () => Effect.fail(noDatabase),
          remove: () => Effect.fail(noDatabase),
          configure
        })
      }
    }

    let version: string | undefined
    // one read at a time, so that an older list never replaces a newer one
    const reading = yield* Semaphore.make(1)
    const read = (force: boolean) =>
      reading.withPermits(1)(Effect.gen(function*() {
        const now = yield* store.version
        if (!force && now === version) return
        rows = yield* store.list()
        merge()
        version = now
      }))
    yield* read(true)
    yield* Effect.forkScoped(Effect.forever(
      Effect.sleep(options.pollInterval ?? budgetPollInterval).pipe(
        Effect.andThen(read(false)),
        Effect.catch((error) => Effect.logWarning(`budgets: could not read the run-time budgets again: ${error.message}`))
      )
    ))
    // this process sees its own change at once (the others at their next poll)
    const refreshed = <A, E>(change: Effect.Effect<A, E>) =>
      Effect.tap(change, () => Effect.catch(read(true), (error) => Effect.logWarning(`budgets: could not read the run-time budgets again: ${error.message}`)))

    return {
      table,
      administration: BudgetAdministration.of({
        // what this process enforces: another gateway's change shows within the poll interval
        list: (workspace) => Effect.sync(() => ({ config: listConfig(workspace), runtime: rows.filter((budget) => budget.workspace === workspace) })),
        set: (workspace, request, updatedBy) =>
          Effect.gen(function*() {
            const checked = yield* Effect.fromResult(checkBudgetRequest(request))
            if (checked.scope.kind === "api_key") {
              const owner = yield* Effect.mapError(options.keyWorkspace(checked.scope.publicId), unavailable)
              if (owner !== workspace) {
                return yield* new NotFound({ message: `scope.value: no API key "${checked.scope.publicId.slice(0, 40)}" in workspace "${workspace}"` })
              }
            }
            return yield* refreshed(
              Effect.mapError(store.upsert({ id: options.newId(), workspace, ...checked, updatedBy }), unavailable)
            )
          }),
        remove: (workspace, id) =>
          Effect.gen(function*() {
            const configured = listConfig(workspace).find((budget) => budget.id === id)
            if (configured !== undefined) {
              return yield* new InvalidRequest({ message: `id: budget ${id} is set in the configuration ([[rate_limiting.budgets]]): change it there` })
            }
            const notFound = new NotFound({ message: `no budget ${id.slice(0, 40)} in workspace "${workspace}"` })
            if (!isUuid(id)) return yield* notFound
            const removed = yield* refreshed(Effect.mapError(store.remove(id, workspace), unavailable))
            return removed ?? (yield* notFound)
          }),
        configure
      })
    }
  })
