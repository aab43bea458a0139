/**
 * `GET /v1/ui/overview`: the Overview of a time range (src/overview/service.ts), from the query
 * string, of the caller's workspace; the provider outcomes are the process's counters, of every workspace.
 */
import * as Effect from "effect/Effect"
import type { UiOverview } from "../../src/api/uiOverview.ts"
import { Metrics } from "../../src/metrics/metrics.ts"
import { readOverview } from "../../src/overview/service.ts"
import { queryParams } from "./query.ts"
import { jsonResponse } from "./respond.ts"
import type { Caller } from "../../src/workspace.ts"

const processStart = new Date(performance.timeOrigin).toISOString()

export const getUiOverviewHandler = (caller: Caller) => Effect.gen(function*() {
  const query = yield* queryParams
  const param = (name: string) => query.get(name) ?? undefined
  const overview = yield* readOverview(caller.workspace, { function_name: param("function_name"), from: param("from"), to: param("to"), bucket: param("bucket") })
  const metrics = yield* Metrics
  const outcomes = metrics.providerOutcomes().map((outcome) => ({
    ...outcome,
    error_rate: outcome.failed / Math.max(1, outcome.answered + outcome.failed)
  }))
  const answer: UiOverview = { ...overview, provider_outcomes: { since: processStart, outcomes } }
  return jsonResponse(JSON.stringify(answer))
})
