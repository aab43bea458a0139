/**
 * The conformance suite of the spend port (`SpendStore` of src/budgets/spendStore.ts): the same
 * tests against ClickHouse, Postgres and the embedded database (PGlite, with the Postgres
 * adapter). Model calls with costs are written at UTC boundaries (a month's last second and the
 * next month's first, a Sunday's last second and a Monday's first) for two keys, two tag values
 * and two workspaces, and the buckets of each granularity and scope are checked: a call counts in
 * the period of its own time, cached calls and calls without a cost count as calls costing 0,
 * `from` is inclusive and `to` exclusive, a row written twice counts once, and nothing of another
 * workspace is seen.
 */
import { describe, expect, it } from "vitest"
import type { StoredInference, StoredModelInference } from "../../src/analytics/records.ts"
import { apiKeyTag } from "../../src/api/tags.ts"
import type { SpendPeriod, SpendQuery, SpendScope } from "../../src/budgets/spendStore.ts"
import { batch, chatInference, idAt, jsonInference, modelInference, run, storeForSuite, write } from "../support/storeFixtures.ts"

const second = 1000
const keyA = "keyaaaaaaaa1"
const keyB = "keybbbbbbbb2"
const keyC = "keycccccccc3"

/** 2026-03-01 is a Sunday; February 2026 has 28 days */
const feb28Last = Date.UTC(2026, 1, 28, 23, 59, 59)
const mar1 = Date.UTC(2026, 2, 1)
const sundayLast = Date.UTC(2026, 2, 1, 23, 59, 59)
const monday = Date.UTC(2026, 2, 2)
const mar31Last = Date.UTC(2026, 2, 31, 23, 59, 59)
const apr1 = Date.UTC(2026, 3, 1)

let sequence = 0
/** an inference at `ms` with one model call per [time, cost] of `calls` (a cost of undefined: a call without one) */
const inferenceWith = (
  ms: number,
  tags: Record<string, string>,
  calls: ReadonlyArray<readonly [number, number | undefined, Partial<StoredModelInference>?]>,
  fields: Partial<StoredInference> = {}
) => {
  const make = fields.functionType === "json" ? jsonInference : chatInference
  const inference = make({ id: idAt(ms, sequence++), tags, ...fields })
  const modelInferences = calls.map(([at, cost, extra]) =>
    modelInference(inference.id, { id: idAt(at, sequence++), timestamp: at, cost, workspace: inference.workspace, ...extra })
  )
  return { inference, modelInferences }
}

const seeded = [
  inferenceWith(feb28Last, { [apiKeyTag]: keyA, team: "red" }, [[feb28Last, 1]]),
  // begun in February, its call answered in March: the call's time decides
  inferenceWith(mar1 - 200, { [apiKeyTag]: keyB, team: "red" }, [[mar1, 2]]),
  inferenceWith(sundayLast, { [apiKeyTag]: keyA, team: "blue" }, [[sundayLast, 4]]),
  // a json inference with two calls: one priced, one from the cache without a cost
  inferenceWith(monday, { [apiKeyTag]: keyA, team: "red" }, [[monday, 8], [monday + 500, undefined, { cached: true }]], { functionType: "json", functionName: "extract" }),
  inferenceWith(mar31Last, { [apiKeyTag]: keyB, team: "blue" }, [[mar31Last, 16]]),
  inferenceWith(apr1, { [apiKeyTag]: keyB, team: "red" }, [[apr1, 32]]),
  // a cached call whose provider has cost rules: 0
  inferenceWith(apr1 + second, { [apiKeyTag]: keyB, team: "red" }, [[apr1 + second, 0, { cached: true }]]),
  // another workspace's key, with the same tag, inside the range
  inferenceWith(mar1 + 12 * 3600 * second, { [apiKeyTag]: keyC, team: "red" }, [[mar1 + 12 * 3600 * second, 100]], { workspace: "team-a" })
]

const range = { from: Date.UTC(2026, 1, 28), to: Date.UTC(2026, 3, 2) }
const period = (start: number, cost: number, calls: number): SpendPeriod => ({ periodStart: start, cost, calls })

const expectPeriods = (found: ReadonlyArray<SpendPeriod>, wanted: ReadonlyArray<SpendPeriod>) => {
  expect(found.map(({ calls, periodStart }) => ({ periodStart: new Date(periodStart).toISOString(), calls })))
    .toEqual(wanted.map(({ calls, periodStart }) => ({ periodStart: new Date(periodStart).toISOString(), calls })))
  found.forEach((row, i) => expect(row.cost, new Date(row.periodStart).toISOString()).toBeCloseTo(wanted[i].cost, 12))
}

describe.each(["clickhouse", "postgres", "pglite"] as const)("%s spend store", (backend) => {
  const suite = storeForSuite(backend)
  let written = false
  const spend = async (query: Partial<SpendQuery> & Pick<SpendQuery, "granularity">) => {
    if (!written) {
      const rows = batch({ inferences: seeded.map((row) => row.inference), modelInferences: seeded.flatMap((row) => row.modelInferences) })
      await run(write(suite.store, rows))
      // written twice (a retried batch): still counted once
      await run(write(suite.store, rows))
      written = true
    }
    const scope: SpendScope = query.scope ?? { kind: "workspace" }
    return run(suite.store.spend.spend({ workspace: "default", ...range, ...query, scope }))
  }

  it("sums a workspace's calls per UTC day, a month's last second and the next's first apart", async () => {
    expectPeriods(await spend({ granularity: "day" }), [
      period(Date.UTC(2026, 1, 28), 1, 1),
      period(mar1, 6, 2),
      period(monday, 8, 2),
      period(Date.UTC(2026, 2, 31), 16, 1),
      period(apr1, 32, 2)
    ])
  })

  it("sums per week from Monday: a Sunday's last second is the week before the Monday's first", async () => {
    expectPeriods(await spend({ granularity: "week" }), [
      period(Date.UTC(2026, 1, 23), 7, 3),
      period(monday, 8, 2),
      period(Date.UTC(2026, 2, 30), 48, 3)
    ])
  })

  it("sums per calendar month", async () => {
    expectPeriods(await spend({ granularity: "month" }), [
      period(Date.UTC(2026, 1, 1), 1, 1),
      period(mar1, 30, 5),
      period(apr1, 32, 2)
    ])
  })

  it("sums one API key's calls, found by its inferences' tag", async () => {
    expectPeriods(await spend({ granularity: "month", scope: { kind: "api_key", publicId: keyA } }), [
      period(Date.UTC(2026, 1, 1), 1, 1),
      period(mar1, 12, 3)
    ])
    expectPeriods(await spend({ granularity: "day", scope: { kind: "api_key", publicId: keyB } }), [
      period(mar1, 2, 1),
      period(Date.UTC(2026, 2, 31), 16, 1),
      period(apr1, 32, 2)
    ])
    expect(await spend({ granularity: "day", scope: { kind: "api_key", publicId: "keynobody000" } })).toEqual([])
  })

  it("sums one tag value's calls", async () => {
    expectPeriods(await spend({ granularity: "day", scope: { kind: "tag", key: "team", value: "red" } }), [
      period(Date.UTC(2026, 1, 28), 1, 1),
      period(mar1, 2, 1),
      period(monday, 8, 2),
      period(apr1, 32, 2)
    ])
    expectPeriods(await spend({ granularity: "week", scope: { kind: "tag", key: "team", value: "blue" } }), [
      period(Date.UTC(2026, 1, 23), 4, 1),
      period(Date.UTC(2026, 2, 30), 16, 1)
    ])
    expect(await spend({ granularity: "day", scope: { kind: "tag", key: "team", value: "green" } })).toEqual([])
    expect(await spend({ granularity: "day", scope: { kind: "tag", key: "colour", value: "red" } })).toEqual([])
  })

  it("counts calls at `from` and not at `to`", async () => {
    expectPeriods(await spend({ granularity: "day", from: mar1, to: monday }), [period(mar1, 6, 2)])
    expectPeriods(await spend({ granularity: "month", from: mar1 + 1, to: mar31Last + 1 }), [period(mar1, 28, 4)])
    // a range cutting into a week: the period still starts on Monday
    expectPeriods(await spend({ granularity: "week", from: mar1, to: monday + 1 }), [period(Date.UTC(2026, 1, 23), 6, 2), period(monday, 8, 1)])
  })

  it("sees only the workspace asked for: another workspace's key and tag read nothing", async () => {
    expect(await spend({ granularity: "day", scope: { kind: "api_key", publicId: keyC } })).toEqual([])
    expectPeriods(await spend({ granularity: "month", workspace: "team-a" }), [period(mar1, 100, 1)])
    expectPeriods(await spend({ granularity: "month", workspace: "team-a", scope: { kind: "tag", key: "team", value: "red" } }), [period(mar1, 100, 1)])
    expect(await spend({ granularity: "month", workspace: "team-a", scope: { kind: "api_key", publicId: keyA } })).toEqual([])
    expect(await spend({ granularity: "month", workspace: "team-b" })).toEqual([])
  })
})
