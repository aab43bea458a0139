/**
 * `/v1/budgets` (src/api/budgets.ts): decode, run the budgets' administration
 * (src/budgets/runtime.ts) in the caller's workspace, answer JSON.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import { type BudgetCondition, type BudgetJson, SetBudgetRequest } from "../../src/api/budgets.ts"
import { actorOf } from "../../src/audit/service.ts"
import type { Budget } from "../../src/budgets/budget.ts"
import { BudgetAdministration, conditionsOf } from "../../src/budgets/runtime.ts"
import type { RuntimeBudget } from "../../src/budgets/runtimeStore.ts"
import { makeDecoder } from "../../src/decode.ts"
import type { ScopeCondition } from "../../src/ratelimit/rules.ts"
import { Configuration } from "../../src/services.ts"
import type { Caller } from "../../src/workspace.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"

const decodeSet = makeDecoder(SetBudgetRequest)

const conditionJson = (condition: ScopeCondition): BudgetCondition =>
  condition.kind === "api_key"
    ? { kind: "api_key", value: condition.publicId }
    : condition.kind === "workspace"
    ? { kind: "workspace", value: condition.workspace }
    : { kind: "tag", key: condition.key, value: condition.value }

export const runtimeBudgetJson = (budget: RuntimeBudget): BudgetJson => ({
  id: budget.id,
  source: "runtime",
  scope: conditionsOf(budget).map(conditionJson),
  period: budget.period,
  limit: budget.limit,
  updated_at: new Date(budget.updatedAt).toISOString(),
  updated_by: budget.updatedBy ?? null
})

export const configBudgetJson = (budget: Budget): BudgetJson => ({
  id: budget.id,
  source: "config",
  scope: budget.scope.map(conditionJson),
  period: budget.period,
  limit: budget.limit,
  updated_at: null,
  updated_by: null
})

export const listBudgetsHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const { config, runtime } = yield* (yield* BudgetAdministration).list(caller.workspace)
    return jsonResponse(JSON.stringify({ budgets: [...runtime.map(runtimeBudgetJson), ...config.map(configBudgetJson)] }))
  })

export const setBudgetHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const request = yield* readJsonBody(decodeSet, config.gateway.maxRequestBodyBytes)
    const budget = yield* (yield* BudgetAdministration).set(caller.workspace, request, actorOf(caller).actor)
    return jsonResponse(JSON.stringify(runtimeBudgetJson(budget)))
  })

export const deleteBudgetHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const params = yield* HttpRouter.params
    const removed = yield* (yield* BudgetAdministration).remove(caller.workspace, params.id ?? "")
    return jsonResponse(JSON.stringify(runtimeBudgetJson(removed)))
  })
