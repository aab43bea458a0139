/** `GET /v1/spend` (src/api/spend.ts): the spend of the caller's workspace (src/budgets/spendRead.ts), from the query string. */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { readSpend } from "../../src/budgets/spendRead.ts"
import type { Caller } from "../../src/workspace.ts"
import { queryParams } from "./query.ts"
import { jsonResponse } from "./respond.ts"

export const getSpendHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const query = yield* queryParams
    const param = (name: string) => query.get(name) ?? undefined
    const now = yield* Clock.currentTimeMillis
    const answer = yield* readSpend(caller.workspace, {
      api_key: param("api_key"),
      tag_key: param("tag_key"),
      tag_value: param("tag_value"),
      from: param("from"),
      to: param("to"),
      granularity: param("granularity")
    }, now)
    return jsonResponse(JSON.stringify(answer))
  })
