/**
 * The budget table of a process (src/budgets/runtime.ts) on the relational store, on Postgres and
 * on the embedded database: empty without any budget (the hot path's case), the configuration's
 * budgets alone, then the database's merged in — at once for the process that set them, within
 * the poll for another — and the store's upsert by (workspace, scope, period) and its version.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRelationalStore } from "../../layers/postgres/relational.ts"
import type { Budget } from "../../src/budgets/budget.ts"
import { makeRuntimeBudgets } from "../../src/budgets/runtime.ts"
import { uuidv7 } from "../../src/ids.ts"
import type { RelationalStore } from "../../src/relational.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"

const configBudget: Budget = { id: "cfg1", source: "config", scope: [{ kind: "workspace", workspace: "gateway::each" }], period: "day", limit: 3 }
const otherWorkspace: Budget = { id: "cfg2", source: "config", scope: [{ kind: "workspace", workspace: "team-z" }], period: "month", limit: 9 }

describe.each(["postgres", "pglite"] as const)("the budget table on %s", (backend) => {
  let database: TestDatabase
  let scope: Scope.Closeable
  let store: RelationalStore
  const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.provide(scope)(effect))
  const budgetsOf = (configBudgets: ReadonlyArray<Budget>, pollInterval = 200) =>
    run(makeRuntimeBudgets({
      configBudgets,
      store: store.budgets,
      keyWorkspace: (publicId) => Effect.succeed(publicId === "keyofteama1" ? "team-a" : undefined),
      newId: () => uuidv7(Date.now()),
      pollInterval
    }))

  beforeAll(async () => {
    database = await freshDatabase(backend)
    scope = Effect.runSync(Scope.make())
    store = await run(makeRelationalStore(database.url))
    await Effect.runPromise(store.migrate)
  })
  afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
    await database?.drop()
  })

  it("is empty without budgets, holds the configuration's alone, then merges the database's", async () => {
    const none = await budgetsOf([])
    expect(none.table.current()).toEqual([])
    const configured = await budgetsOf([configBudget, otherWorkspace])
    expect(configured.table.current()).toEqual([configBudget, otherWorkspace])
    // the configuration's budgets that can hold in team-a, read-only
    expect((await Effect.runPromise(configured.administration.list("team-a"))).config).toEqual([configBudget])

    const set = await Effect.runPromise(configured.administration.set("team-a", { scope: { kind: "tag", key: "app", value: "x" }, period: "week", limit: 4 }, "me"))
    // the process that set it holds it at once
    expect(configured.table.current()).toEqual([configBudget, otherWorkspace, {
      id: set.id,
      source: "runtime",
      scope: [{ kind: "workspace", workspace: "team-a" }, { kind: "tag", key: "app", value: "x" }],
      period: "week",
      limit: 4
    }])
    // another within its poll
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(none.table.current().map((budget) => budget.id)).toEqual([set.id])

    await Effect.runPromise(configured.administration.remove("team-a", set.id))
    expect(configured.table.current()).toEqual([configBudget, otherWorkspace])
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(none.table.current()).toEqual([])
  })

  it("the store: one row per workspace, scope and period (its id kept), the version moved by each row changed", async () => {
    const before = await Effect.runPromise(store.budgets.version)
    const first = await Effect.runPromise(store.budgets.upsert({ id: uuidv7(Date.now()), workspace: "team-b", scope: { kind: "workspace" }, period: "total", limit: 1 }))
    const again = await Effect.runPromise(store.budgets.upsert({ id: uuidv7(Date.now()), workspace: "team-b", scope: { kind: "workspace" }, period: "total", limit: 2, updatedBy: "op" }))
    expect(again).toMatchObject({ id: first.id, limit: 2, updatedBy: "op", scope: { kind: "workspace" } })
    const key = await Effect.runPromise(store.budgets.upsert({ id: uuidv7(Date.now()), workspace: "team-b", scope: { kind: "api_key", publicId: "abc" }, period: "total", limit: 5 }))
    expect(key.id).not.toBe(first.id)
    expect((await Effect.runPromise(store.budgets.list("team-b"))).map((budget) => budget.id)).toEqual([first.id, key.id])
    expect(await Effect.runPromise(store.budgets.remove(first.id, "team-c"))).toBeUndefined()
    expect((await Effect.runPromise(store.budgets.remove(first.id, "team-b")))?.id).toBe(first.id)
    expect(BigInt(await Effect.runPromise(store.budgets.version)) - BigInt(before)).toBe(4n)
  })
})
