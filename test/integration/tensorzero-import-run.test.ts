/**
 * The import's driver (layers/tensorzeroImport/run.ts) on real destinations, from a source
 * held in memory (the readers of TensorZero's databases have their own suites): every row is
 * written once across a run that fails midway and the run after it, the saved positions are
 * where the next run starts, a row that cannot be mapped is skipped and reported (or stops the
 * run with `strict`), a dry run writes nothing, and a later run picks up new rows.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AnalyticsStores } from "../../layers/observability/stores.ts"
import { makeClickHouseStores } from "../../layers/clickhouse/stores.ts"
import { makePostgresStores } from "../../layers/postgres/stores.ts"
import { makeWriters, type Writers } from "../../layers/tensorzeroImport/destination.ts"
import { clickHousePositions, type ImportPositions, postgresPositions } from "../../layers/tensorzeroImport/positions.ts"
import { summaryText } from "../../layers/tensorzeroImport/progress.ts"
import { runImport } from "../../layers/tensorzeroImport/run.ts"
import { uuidv7 } from "../../src/ids.ts"
import { StoreError } from "../../src/storeError.ts"
import {
  type Position,
  SourceError,
  type StreamName,
  type StreamRows,
  type TensorZeroSource,
  type TzFeedback,
  type TzInference
} from "../../src/tensorzeroImport/source.ts"
import { freshDatabase, type TestBackend, type TestDatabase } from "../support/databases.ts"

const start = Date.UTC(2026, 2, 1)
const episode = uuidv7(start)

/** ids by index: the same inference in every source built here */
const ids = new Map<number, string>()

const inference = (index: number): TzInference => {
  const id = ids.get(index) ?? uuidv7(start + index * 60_000)
  ids.set(index, id)
  return {
    id,
    kind: "chat",
    functionName: "draft",
    variantName: "v1",
    episodeId: episode,
    input: { messages: [{ role: "user", content: [{ type: "text", text: `question ${index}` }] }] },
    output: [{ type: "text", text: `answer ${index}` }],
    inferenceParams: { chat_completion: {} },
    processingTimeMs: 100 + index,
    tags: { "tensorzero::evaluation_run_id": "run-1" },
    timestamp: start + index * 60_000
  }
}

const feedbackOn = (target: TzInference, index: number): TzFeedback => ({
  id: uuidv7(start + 100_000_000 + index),
  kind: "float",
  metricName: "score",
  targetId: target.id,
  targetType: "inference",
  value: index / 10,
  tags: {},
  timestamp: start + 100_000_000 + index
})

/** rows by stream, read in `(at, id)` order; `failAfter` pages, the next page read fails (as a source that went away) */
const memorySource = (rows: { inferences: Array<TzInference | { unreadable: true; id: string; reason: string }>; feedback: Array<TzFeedback> }) => {
  const state = { pagesLeft: Infinity, pagesRead: 0 }
  const atOf = (row: any): number => row.timestamp ?? 0
  const source: TensorZeroSource = {
    description: "memory",
    streams: ["inferences", "feedback"],
    estimate: (stream) => Effect.succeed((rows as any)[stream].length),
    page: <S extends StreamName>(stream: S, after: Position | undefined, limit: number) =>
      Effect.suspend(() => {
        if (state.pagesLeft-- <= 0) return Effect.fail(new SourceError({ message: "the source went away" }))
        state.pagesRead++
        const all = ((rows as any)[stream] as Array<any>).slice().sort((a, b) => atOf(a) - atOf(b) || (a.id < b.id ? -1 : 1))
        const picked = all.filter((row) => after === undefined || atOf(row) > after.at || (atOf(row) === after.at && row.id > after.id)).slice(0, limit)
        const last = picked.at(-1)
        return Effect.succeed({ rows: picked as Array<StreamRows[S]>, last: last === undefined ? undefined : { at: atOf(last), id: last.id } })
      })
  }
  return { source, state }
}

const quiet = { write: () => undefined, isTTY: false }

interface Destination {
  readonly stores: AnalyticsStores
  readonly positions: ImportPositions
  readonly count: (table: "inferences" | "feedback") => Promise<{ rows: number; distinct: number }>
}

describe.each<TestBackend>(["postgres", "clickhouse"])("the import driver into %s", (backend) => {
  let database: TestDatabase
  let scope: Scope.Closeable
  let destination: Destination

  beforeAll(async () => {
    database = await freshDatabase(backend)
    scope = Effect.runSync(Scope.make())
    const opened = await Effect.runPromise(Scope.provide(scope)(Effect.gen(function*() {
      const stores = backend === "clickhouse" ? yield* makeClickHouseStores(database.url) : yield* makePostgresStores(database.url)
      yield* stores.database.migrate
      const positions = backend === "clickhouse" ? yield* clickHousePositions(database.url) : yield* postgresPositions(database.url)
      return { stores, positions }
    })))
    const { queryDatabase } = await import("../support/databases.ts")
    destination = {
      ...opened,
      count: async (table) => {
        const query = backend === "clickhouse"
          ? `SELECT toUInt32(count()) AS rows, toUInt32(uniqExact(id)) AS distinct_ids FROM ${table === "inferences" ? "ChatInference" : "FloatMetricFeedback"} FINAL`
          : `SELECT count(*)::int AS rows, count(DISTINCT id)::int AS distinct_ids FROM ${table === "inferences" ? "chat_inference" : "float_metric_feedback"}`
        const [row] = await queryDatabase(database, query)
        return { rows: Number(row.rows), distinct: Number(row.distinct_ids) }
      }
    }
  }, 60_000)

  afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
    await database?.drop()
  })

  const run = (source: TensorZeroSource, options: { strict?: boolean; dryRun?: boolean; sourceName?: string } = {}) =>
    Effect.runPromiseExit(runImport({
      source,
      sourceName: options.sourceName ?? "memory://tz",
      writers: options.dryRun === true ? undefined : makeWriters(destination.stores, undefined, "default"),
      positions: options.dryRun === true ? undefined : destination.positions,
      workspace: "default",
      strict: options.strict ?? false,
      output: quiet,
      pageSize: 4
    }))

  it("writes every row once across a run that fails midway and the next, skipping and reporting what cannot be mapped", async () => {
    const inferences = Array.from({ length: 30 }, (_, index) => inference(index))
    const bad = { ...inference(30), input: "{not json" }
    const unreadable = { unreadable: true as const, id: uuidv7(start + 31 * 60_000), reason: "a column holding what its type does not allow" }
    const { source, state } = memorySource({ inferences: [...inferences, bad, unreadable as any], feedback: inferences.slice(0, 9).map(feedbackOn) })
    ;(unreadable as any).timestamp = start + 31 * 60_000

    state.pagesLeft = 3
    const first = await run(source)
    expect(Exit.isFailure(first)).toBe(true)
    expect(String((first as any).cause)).toContain("the source went away")
    expect((await destination.count("inferences")).distinct).toBe(12)

    state.pagesLeft = Infinity
    const second = await run(source)
    if (Exit.isFailure(second)) throw new Error(String(second.cause))
    expect(await destination.count("inferences")).toEqual({ rows: 30, distinct: 30 })
    expect(await destination.count("feedback")).toEqual({ rows: 9, distinct: 9 })

    const stored = await Effect.runPromise(destination.stores.inferences.getInferences("default", [inferences[7].id]))
    expect(stored[0]).toMatchObject({ id: inferences[7].id, episodeId: episode, processingTimeMs: 107, tags: { "gateway::evaluation_run_id": "run-1" } })

    const [inferenceTally] = second.value
    expect(inferenceTally).toMatchObject({ stream: "inferences", skipped: 2 })
    const summary = summaryText(second.value, false)
    expect(summary).toContain("inferences: 1 × input is not JSON")
    expect(summary).toContain(`${bad.id}: {not json`)
    expect(summary).toContain(`inferences: 1 × a column holding what its type does not allow`)
    expect(summary).toContain(unreadable.id)
  })

  it("picks up rows that arrived since, without writing the old ones twice", async () => {
    const later = Array.from({ length: 5 }, (_, index) => inference(1000 + index))
    const { source } = memorySource({ inferences: [...Array.from({ length: 30 }, (_, index) => inference(index)), ...later], feedback: [] })
    const exit = await run(source)
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    expect(await destination.count("inferences")).toEqual({ rows: 35, distinct: 35 })
    // only the rows from ten minutes before the saved position on were read again
    // only the rows from ten minutes before the saved position on were read again: the last ones, and the new
    expect(exit.value[0].read).toBeGreaterThan(5)
    expect(exit.value[0].read).toBeLessThan(5 + 12)
  })

  it("with strict, stops at the first row that cannot be mapped, naming it", async () => {
    const bad = { ...inference(2000), output: [{ type: "hologram" }] }
    const { source } = memorySource({ inferences: [bad], feedback: [] })
    const exit = await run(source, { strict: true, sourceName: "memory://strict" })
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String((exit as any).cause)).toContain(`--strict: inferences row ${bad.id}: output holds a block of unknown type (hologram)`)
  })

  it("on a dry run, reads and maps everything and writes nothing", async () => {
    const fresh = Array.from({ length: 6 }, (_, index) => inference(5000 + index))
    const { source } = memorySource({ inferences: fresh, feedback: [] })
    const exit = await run(source, { dryRun: true, sourceName: "memory://dry" })
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    expect(exit.value[0]).toMatchObject({ read: 6, written: 6, skipped: 0 })
    expect(summaryText(exit.value, true)).toContain("would write")
    expect((await destination.count("inferences")).distinct).toBe(35)
  })
})

describe("the import driver's pipeline (a page written while the next is mapped and written)", () => {
  /** 12 inferences in pages of 4; the write of each page after `delays[page]` ms, failing where `fails` says */
  const pipelined = (delays: ReadonlyArray<number>, fails: ReadonlySet<number> = new Set()) => {
    const rows = Array.from({ length: 12 }, (_, index) => inference(7000 + index))
    const { source } = memorySource({ inferences: rows, feedback: [] })
    const saved: Array<string> = []
    let page = 0
    const writers = {
      inferences: (records: ReadonlyArray<unknown>) => {
        const index = page++
        return Effect.sleep(delays[index] ?? 0).pipe(Effect.andThen(
          fails.has(index) ? Effect.fail(new StoreError({ message: `page ${index} refused` })) : Effect.succeed({ written: records.length, refused: [] })
        ))
      }
    } as unknown as Writers
    const positions: ImportPositions = {
      load: () => Effect.succeed(new Map()),
      save: (_source, _stream, position) => Effect.sync(() => void saved.push(position.id))
    }
    const exit = Effect.runPromiseExit(runImport({
      source: { ...source, streams: ["inferences"] },
      sourceName: "memory://pipeline",
      writers,
      positions,
      workspace: "default",
      strict: false,
      output: quiet,
      pageSize: 4
    }))
    return { exit, saved, lastIds: [rows[3].id, rows[7].id, rows[11].id] }
  }

  it("saves positions in page order when a later page is stored first", async () => {
    const { exit, saved, lastIds } = pipelined([60, 0, 0])
    const result = await exit
    if (Exit.isFailure(result)) throw new Error(String(result.cause))
    expect(result.value[0]).toMatchObject({ read: 12, written: 12 })
    expect(saved).toEqual(lastIds)
  })

  it("saves no position past a page whose write failed, even for a page stored after it", async () => {
    const { exit, saved, lastIds } = pipelined([0, 60, 0], new Set([1]))
    const result = await exit
    expect(Exit.isFailure(result)).toBe(true)
    expect(String((result as any).cause)).toContain("inferences: writing: page 1 refused")
    expect(saved).toEqual([lastIds[0]])
  })
})
