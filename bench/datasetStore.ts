// The dataset store at scale, by hand (not a test): inserts `count` datapoints (100,000 by
// default) into one dataset in one call, then times listings of 100 with tag filters at the
// first page and deep in the dataset, and an export page by key.
// Usage: node bench/datasetStore.ts <analytics database URL> [count]
// (a ClickHouse database is created by the migrations; a Postgres one must exist)
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { makeClickHouseStores } from "../layers/clickhouse/stores.ts"
import { makePostgresStores } from "../layers/postgres/stores.ts"
import type { DatapointQuery, NewDatapoint } from "../src/datasets/store.ts"
import { uuidv7 } from "../src/ids.ts"
import { backendOf } from "../src/analytics/stores.ts"

const [url, countArgument] = process.argv.slice(2)
const backend = url === undefined ? undefined : backendOf(url)
if (url === undefined || backend === undefined) {
  console.error("usage: node bench/datasetStore.ts <http://... or postgres://... URL> [count]")
  process.exit(2)
}
const count = Number(countArgument ?? 100_000)
const datasetName = `bench ${Date.now()}`

const datapoint = (index: number, now: number): NewDatapoint => {
  const question = `question ${index}: what is the weather like in city ${index % 500} on day ${index % 365}?`
  const answer = `It is ${index % 2 === 0 ? "sunny" : "rainy"} in city ${index % 500}, around ${index % 40} degrees.`
  return {
    id: uuidv7(now),
    datasetName,
    functionName: index % 4 === 0 ? "extract" : "answer",
    functionType: "chat",
    input: { system: { assistant_name: "Weatherbot" }, messages: [{ role: "user", content: [{ type: "text", text: question }] }] },
    output: [{ type: "text", text: answer }],
    tags: { env: index % 20 === 0 ? "dev" : "prod", split: String(index % 10), user: `u${index % 1000}` },
    isCustom: false,
    updatedAt: now,
    searchText: `weatherbot\n${question}\n${answer}`.toLowerCase()
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]

const program = Effect.gen(function*() {
  const stores = yield* (backend === "clickhouse" ? makeClickHouseStores(url) : makePostgresStores(url))
  yield* stores.database.migrate
  const store = stores.datasets
  const now = Date.now()
  const datapoints = Array.from({ length: count }, (_, index) => datapoint(index, now))

  let started = performance.now()
  yield* store.insertDatapoints("default", datapoints)
  const insertS = (performance.now() - started) / 1000
  console.log(`${backend}: inserted ${count} datapoints in ${insertS.toFixed(2)} s (${Math.round(count / insertS)} datapoints/s)`)

  const timed = (label: string, query: Partial<DatapointQuery>, runs = 50) =>
    Effect.gen(function*() {
      const times: Array<number> = []
      let found = 0
      for (let run = 0; run < runs; run++) {
        started = performance.now()
        found = (yield* store.listDatapoints("default", { datasetName, orderBy: [], limit: 100, offset: 0, ...query })).length
        times.push(performance.now() - started)
      }
      times.sort((a, b) => a - b)
      console.log(`${backend}: ${label}: ${found} rows, p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms`)
    })

  const prod = { type: "tag", key: "env", value: "prod", comparison_operator: "=" } as const
  yield* timed("no filter, offset 0", {})
  yield* timed("tag env=prod (95%), offset 0", { filter: prod })
  yield* timed("tag env=prod (95%), offset 90000", { filter: prod, offset: 90_000 }, 20)
  yield* timed("tag split=3 (10%), offset 0", { filter: { type: "tag", key: "split", value: "3", comparison_operator: "=" } })
  yield* timed("tag user=u7 (0.1%), offset 0", { filter: { type: "tag", key: "user", value: "u7", comparison_operator: "=" } })
  yield* timed("tag env=prod, function extract, offset 0", { filter: prod, functionName: "extract" })
  yield* timed("timestamp ascending, offset 0", { orderBy: [{ by: "timestamp", direction: "ascending" }] }, 20)
  yield* timed("search 'city 42' by relevance, offset 0", { search: ["city 42", "sunny"], orderBy: [{ by: "search_relevance" }] }, 20)
  yield* timed("export page after a key", { after: datapoints[50_000 % count].id }, 20)

  if (process.env.BENCH_KEEP !== undefined) return
  started = performance.now()
  const staled = yield* store.staleDatapoints("default", datasetName, "all", Date.now())
  console.log(`${backend}: staled ${staled} datapoints in ${((performance.now() - started) / 1000).toFixed(2)} s`)
})

const scope = Effect.runSync(Scope.make())
Effect.runPromise(Scope.provide(scope)(program)).then(
  () => Effect.runPromise(Scope.close(scope, Exit.void)),
  (error) => {
    console.error(error)
    process.exit(1)
  }
)
