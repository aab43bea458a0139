/**
 * The conformance suite of the evaluation store (`EvaluationStore` of src/evaluations/store.ts):
 * the same tests against the ClickHouse adapter and the Postgres adapter, each on a real server
 * in a database of its own: exact round trips of runs and results (scores of every kind), the
 * last save of a run winning however quickly saves follow each other, listing and paging, ids
 * that name nothing, a second store on the same database, migrations applied again, and
 * StoreErrors (not crashes) when the server is cut off.
 * The Postgres adapter runs twice: on the Postgres server and on the embedded database (PGlite).
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { EvaluationResultRecord, EvaluationRunRecord, EvaluationRunStatus, EvaluationStore } from "../../src/evaluations/store.ts"
import { uuidv7, uuidv7Timestamp } from "../../src/ids.ts"
import { StoreError } from "../../src/storeError.ts"
import { engineOf, freshDatabase, tablesOf } from "../support/databases.ts"
import { failure, idAt, oddStrings, openStore, run, storeForSuite, withCutOffStore } from "../support/storeFixtures.ts"

/** the workspace the suite writes and reads in (test/integration/workspaces-datasets.test.ts checks the isolation) */
const ws = "default"

// ---- records

/** `record` without the fields whose value is undefined: optional fields are absent when read back */
const withoutUndefined = <A extends object>(record: A): A =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as A

/** a finished run, every field present unless `fields` gives it as undefined */
const runRecord = (fields: Partial<EvaluationRunRecord> = {}): EvaluationRunRecord => {
  const id = fields.id ?? uuidv7(Date.now())
  return withoutUndefined({
    id,
    functionName: "write_haiku",
    variantName: "gpt",
    datasetName: "haikus",
    evaluationName: "haiku_quality",
    evaluatorNames: ["exact", "judge", "length"],
    datapointCount: 12,
    status: "completed" as EvaluationRunStatus,
    completed: 12,
    errors: 1,
    summary: {
      exact: { count: 11, mean: 0.1 + 0.2, stderr: 1 / 3, errors: 1 },
      judge: { count: 0, errors: 12 },
      length: { count: 1, mean: 42, errors: 0 }
    },
    startedAt: uuidv7Timestamp(id),
    finishedAt: uuidv7Timestamp(id) + 1234,
    failure: undefined,
    ...fields
  })
}

const resultRecord = (runId: string, fields: Partial<EvaluationResultRecord> = {}): EvaluationResultRecord =>
  withoutUndefined({
    runId,
    datapointId: uuidv7(Date.now()),
    inferenceId: uuidv7(Date.now()),
    scores: { exact: true, judge: 0.75 },
    evaluatorErrors: {},
    error: undefined,
    timestamp: Date.now(),
    ...fields
  })

/** the run's state after `completed` datapoints, still running */
const running = (run: EvaluationRunRecord, completed: number): EvaluationRunRecord => {
  const { finishedAt: _finishedAt, failure: _failure, ...rest } = run
  return { ...rest, status: "running", completed, errors: 0, summary: {} }
}

/** a clock at `ms`, else as the default one: saves made with it happen within one millisecond */
const clockAt = (ms: number): Clock.Clock => {
  const base = Effect.runSync(Clock.clockWith(Effect.succeed))
  return {
    currentTimeMillisUnsafe: () => ms,
    currentTimeMillis: Effect.succeed(ms),
    currentTimeNanosUnsafe: () => BigInt(ms) * 1_000_000n,
    currentTimeNanos: Effect.succeed(BigInt(ms) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => base.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: base.monotonicTimeNanos,
    sleep: (duration) => base.sleep(duration)
  }
}

const at = <A, E>(ms: number, effect: Effect.Effect<A, E>) => Effect.provideService(effect, Clock.Clock, clockAt(ms))

const page = (limit: number, offset = 0) => ({ limit, offset })

/** every result of `runId` */
const resultsOf = (store: EvaluationStore, runId: string) => run(store.getResults(ws, runId, page(1000)))

describe.each(["clickhouse", "postgres", "pglite"] as const)("%s evaluation store", (backend) => {
  /** the adapters' backend, which the errors name: PGlite is reached with the Postgres ones */
  const engine = engineOf(backend)

  describe("runs and results", () => {
    const suite = storeForSuite(backend)
    const store = () => suite.store.evaluations

    it("reads a run back as saved, every field; optional fields absent when not given", async () => {
      const full = runRecord({ status: "failed", failure: "the variant is gone" })
      const minimal = runRecord({
        evaluationName: undefined,
        evaluatorNames: [],
        datapointCount: 0,
        status: "running",
        completed: 0,
        errors: 0,
        summary: {},
        finishedAt: undefined
      })
      await run(store().saveRun(ws, full))
      await run(store().saveRun(ws, minimal))
      expect(await run(store().getRun(ws, full.id))).toStrictEqual(full)
      const read = await run(store().getRun(ws, minimal.id))
      expect(read).toStrictEqual(minimal)
      for (const field of ["evaluationName", "finishedAt", "failure"]) expect(field in read!).toBe(false)
      // an id in capitals names the same run
      expect(await run(store().getRun(ws, full.id.toUpperCase()))).toStrictEqual(full)
    })

    it("a later state of a run replaces the earlier: running, then completed with its summary and end", async () => {
      const done = runRecord({ functionName: `replaced ${uuidv7(Date.now())}` })
      await run(store().saveRun(ws, running(done, 0)))
      expect(await run(store().getRun(ws, done.id))).toStrictEqual(running(done, 0))
      await run(store().saveRun(ws, running(done, 5)))
      expect(await run(store().getRun(ws, done.id))).toStrictEqual(running(done, 5))
      await run(store().saveRun(ws, done))
      expect(await run(store().getRun(ws, done.id))).toStrictEqual(done)
      expect(await run(store().listRuns(ws, { functionName: done.functionName, limit: 10, offset: 0 }))).toStrictEqual([done])
    })

    it("the last save wins: quick successive saves, saves within one millisecond or with the clock stepped back, saves sent together", async () => {
      const base = runRecord({ datapointCount: 100 })
      // awaited one after the other, as fast as the server answers
      for (let completed = 0; completed <= 40; completed++) await run(store().saveRun(ws, running(base, completed)))
      // the last has made less progress than the one before: still the last
      const stopped = { ...running(base, 3), status: "stopped_early" as const, finishedAt: base.startedAt + 10 }
      await run(store().saveRun(ws, stopped))
      expect(await run(store().getRun(ws, base.id))).toStrictEqual(stopped)

      // all within one millisecond, then with the clock a second back
      const now = Date.now()
      for (let completed = 0; completed < 10; completed++) await run(at(now, store().saveRun(ws, running(base, completed))))
      await run(at(now - 1000, store().saveRun(ws, base)))
      expect(await run(store().getRun(ws, base.id))).toStrictEqual(base)

      // sent together: whichever the server stores last, the last one given wins
      const states = Array.from({ length: 20 }, (_, completed) => running(base, completed))
      await run(at(now, Effect.all(states.map((state) => store().saveRun(ws, state)), { concurrency: "unbounded" })))
      expect(await run(store().getRun(ws, base.id))).toStrictEqual(states.at(-1))
      expect((await run(store().listRuns(ws, { functionName: base.functionName, limit: 1000, offset: 0 }))).filter((found) => found.id === base.id))
        .toStrictEqual([states.at(-1)])
    })

    it("reads results back as inserted, in datapoint id order, page by page, a run's own only", async () => {
      const owner = runRecord()
      await run(store().saveRun(ws, owner))
      const base = Date.UTC(2025, 0, 1)
      // datapoint ids in order; two share a millisecond
      const results = [idAt(base), idAt(base + 1), idAt(base + 2, 1), idAt(base + 2, 2), idAt(base + 3)].map((datapointId, index) =>
        resultRecord(owner.id, { datapointId, timestamp: base + 100 + index, scores: { exact: index % 2 === 0, judge: index / 10 } })
      )
      const other = resultRecord(uuidv7(Date.now()), { datapointId: results[2].datapointId })
      // in two batches, out of order
      await run(store().insertResults(ws, [results[3], other, results[0]]))
      await run(store().insertResults(ws, [results[4], results[1], results[2]]))
      await run(store().insertResults(ws, []))

      expect(await resultsOf(store(), owner.id)).toStrictEqual(results)
      expect(await run(store().getResults(ws, owner.id, page(2)))).toStrictEqual(results.slice(0, 2))
      expect(await run(store().getResults(ws, owner.id, page(2, 2)))).toStrictEqual(results.slice(2, 4))
      expect(await run(store().getResults(ws, owner.id, page(2, 4)))).toStrictEqual(results.slice(4))
      expect(await run(store().getResults(ws, owner.id, page(2, 5)))).toEqual([])
      expect(await run(store().getResults(ws, owner.id, page(0)))).toEqual([])
      expect(await run(store().getResults(ws, owner.id.toUpperCase(), page(3, 1)))).toStrictEqual(results.slice(1, 4))
      expect(await resultsOf(store(), other.runId)).toStrictEqual([other])
    })

    it("a result inserted again replaces the earlier one, also when given twice in one batch", async () => {
      const runId = uuidv7(Date.now())
      const first = resultRecord(runId, { scores: { exact: false } })
      const kept = resultRecord(runId)
      await run(store().insertResults(ws, [first, kept]))
      const again = resultRecord(runId, { datapointId: first.datapointId, inferenceId: undefined, scores: {}, error: "timed out" })
      await run(store().insertResults(ws, [again]))
      expect(await resultsOf(store(), runId)).toStrictEqual([again, kept].sort((a, b) => a.datapointId < b.datapointId ? -1 : 1))

      const twice = resultRecord(runId, { scores: { exact: true } })
      const later = { ...twice, scores: { exact: false }, inferenceId: uuidv7(Date.now()) }
      await run(store().insertResults(ws, [twice, later]))
      expect((await resultsOf(store(), runId)).find((result) => result.datapointId === twice.datapointId)).toStrictEqual(later)
      expect(await resultsOf(store(), runId)).toHaveLength(3)
    })

    it("scores of every kind round-trip exactly: booleans stay booleans, floats bit for bit, null stays null", async () => {
      const scores = {
        yes: true,
        no: false,
        zero: 0,
        one: 1,
        sum: 0.1 + 0.2,
        third: 1 / 3,
        negative: -2.5,
        huge: 1e300,
        largest: Number.MAX_VALUE,
        tiny: -1e-300,
        subnormal: 5e-324,
        unsafe: 2 ** 53 + 2,
        precise: 123456789.12345679,
        none: null
      }
      const runId = uuidv7(Date.now())
      const result = resultRecord(runId, { scores })
      await run(store().insertResults(ws, [result]))
      const [read] = await resultsOf(store(), runId)
      expect(read).toStrictEqual(result)
      for (const [name, value] of Object.entries(scores)) expect(Object.is(read.scores[name], value), name).toBe(true)

      const summarized = runRecord({ summary: { precise: { count: 3, mean: 0.1 + 0.2, stderr: 5e-324, errors: 0 }, big: { count: 2 ** 31, mean: 1e300, errors: 7 } } })
      await run(store().saveRun(ws, summarized))
      const summary = (await run(store().getRun(ws, summarized.id)))!.summary
      expect(summary).toStrictEqual(summarized.summary)
      expect(Object.is(summary.precise.mean, 0.1 + 0.2) && Object.is(summary.precise.stderr, 5e-324)).toBe(true)
    })

    it("evaluator errors and inference errors round-trip; so do strings with quotes, control characters and unicode", async () => {
      const runId = uuidv7(Date.now())
      const failedInference = resultRecord(runId, { inferenceId: undefined, scores: {}, evaluatorErrors: {}, error: "the model answered 500: overloaded" })
      const failedEvaluators = resultRecord(runId, {
        scores: { exact: true, judge: null },
        evaluatorErrors: { judge: "the judge's answer is not JSON", length: "no output" }
      })
      const odd = oddStrings.map((value, index) =>
        resultRecord(runId, { scores: { [value]: index, [`${value} ${index}`]: null }, evaluatorErrors: { [value]: value }, error: value })
      )
      await run(store().insertResults(ws, [failedInference, failedEvaluators, ...odd]))
      const read = await resultsOf(store(), runId)
      expect(read).toStrictEqual([failedInference, failedEvaluators, ...odd].sort((a, b) => a.datapointId < b.datapointId ? -1 : 1))
      const withoutInference = read.find((result) => result.datapointId === failedInference.datapointId)!
      expect("inferenceId" in withoutInference).toBe(false)

      for (const value of oddStrings) {
        const oddRun = runRecord({
          functionName: `fn ${value}`,
          variantName: value,
          datasetName: value,
          evaluationName: value,
          evaluatorNames: [value, "", value],
          summary: { [value]: { count: 1, mean: 1, errors: 0 } },
          status: "failed",
          failure: value
        })
        await run(store().saveRun(ws, oddRun))
        expect(await run(store().getRun(ws, oddRun.id))).toStrictEqual(oddRun)
        expect(await run(store().listRuns(ws, { functionName: oddRun.functionName, limit: 10, offset: 0 }))).toStrictEqual([oddRun])
      }
    })

    it("keeps an error holding U+0000 or a lone surrogate, where the database cannot store it as U+FFFD", async () => {
      const runId = uuidv7(Date.now())
      const result = resultRecord(runId, { error: "nul \u0000 lone \ud800", evaluatorErrors: { "judge \udc00": "nul \u0000 lone \ud800" } })
      await run(store().insertResults(ws, [result]))
      // ClickHouse keeps U+0000, and JSON text keeps the escaped surrogates; Postgres holds neither
      const expected = backend === "clickhouse"
        ? { ...result, error: "nul \u0000 lone \ufffd" }
        : { ...result, error: "nul \ufffd lone \ufffd", evaluatorErrors: { "judge \ufffd": "nul \ufffd lone \ufffd" } }
      expect(await resultsOf(store(), runId)).toStrictEqual([expected])
      const failed = runRecord({ status: "failed", failure: "nul \u0000 lone \ud800" })
      await run(store().saveRun(ws, failed))
      expect((await run(store().getRun(ws, failed.id)))!.failure).toBe(backend === "clickhouse" ? "nul \u0000 lone \ufffd" : "nul \ufffd lone \ufffd")
    })

    it("an unknown run, or an id that is not a UUID, reads as nothing; a write with an id that is not a UUID is refused whole", async () => {
      const unknown = uuidv7(Date.now())
      for (const id of [unknown, "nope", "", "'; DROP TABLE EvaluationRun; DROP TABLE evaluation_run; --"]) {
        expect(await run(store().getRun(ws, id))).toBeUndefined()
        expect(await run(store().getResults(ws, id, page(10)))).toEqual([])
      }

      const notUuid = await failure(store().saveRun(ws, runRecord({ id: "run-1" })))
      expect(notUuid).toBeInstanceOf(StoreError)
      expect(notUuid.message).toMatch(new RegExp(`^${engine} .*uuid`, "i"))
      const runId = uuidv7(Date.now())
      for (const bad of [{ datapointId: "dp-1" }, { inferenceId: "inference' --" }, { runId: "x" }]) {
        const error = await failure(store().insertResults(ws, [resultRecord(runId), resultRecord(runId, bad)]))
        expect(error.message).toMatch(/uuid/i)
      }
      expect(await resultsOf(store(), runId)).toEqual([])

      const badStatus = await failure(store().saveRun(ws, runRecord({ status: "paused" as EvaluationRunStatus })))
      expect(badStatus.message).toMatch(new RegExp(`^${engine} saveRun failed: `))
    })

    it("a second store on the same database reads what the first wrote, and the later save wins whichever store made it", async () => {
      const record = runRecord({ functionName: `shared ${uuidv7(Date.now())}` })
      const result = resultRecord(record.id)
      await run(store().saveRun(ws, running(record, 0)))
      await run(store().insertResults(ws, [result]))
      const second = await openStore(backend, suite.database.url)
      try {
        const other = second.store.evaluations
        expect(await run(other.getRun(ws, record.id))).toStrictEqual(running(record, 0))
        expect(await resultsOf(other, record.id)).toStrictEqual([result])
        await run(other.saveRun(ws, record))
        expect(await run(store().getRun(ws, record.id))).toStrictEqual(record)
        expect(await run(store().listRuns(ws, { functionName: record.functionName, limit: 10, offset: 0 }))).toStrictEqual([record])
      } finally {
        await second.close()
      }
    })

    it("migrating again applies nothing and keeps the runs and results", async () => {
      const record = runRecord()
      const result = resultRecord(record.id)
      await run(store().saveRun(ws, record))
      await run(store().insertResults(ws, [result]))
      expect(await run(suite.store.database.migrate)).toEqual([])
      expect(await run(store().getRun(ws, record.id))).toStrictEqual(record)
      expect(await resultsOf(store(), record.id)).toStrictEqual([result])
    })
  })

  it("two stores migrating one fresh database at once both succeed, and the tables work", async () => {
    const database = await freshDatabase(backend)
    const [first, second] = await Promise.all([openStore(backend, database.url), openStore(backend, database.url)])
    try {
      const applied = await Promise.all([run(first.store.database.migrate), run(second.store.database.migrate)])
      // ClickHouse has no lock: both may apply a migration, which its IF NOT EXISTS makes harmless
      expect(applied.flat()).toContain(backend === "clickhouse" ? "0006_evaluation_runs" : "0008_evaluation_runs")
      expect(await run(first.store.database.migrate)).toEqual([])
      expect(await tablesOf(database)).toEqual(expect.arrayContaining(backend === "clickhouse" ? ["EvaluationResult", "EvaluationRun"] : ["evaluation_result", "evaluation_run"]))
      const record = runRecord()
      const result = resultRecord(record.id)
      await run(first.store.evaluations.saveRun(ws, record))
      await run(first.store.evaluations.insertResults(ws, [result]))
      expect(await run(second.store.evaluations.getRun(ws, record.id))).toStrictEqual(record)
      expect(await resultsOf(second.store.evaluations, record.id)).toStrictEqual([result])
    } finally {
      await first.close()
      await second.close()
      await database.drop()
    }
  })

  describe("listing runs: newest first, by function, page by page", () => {
    const suite = storeForSuite(backend)
    const store = () => suite.store.evaluations
    const base = Date.UTC(2025, 0, 1, 12)
    // started one millisecond apart, except 2 and 3, which share one (and are ordered by id)
    const runs: ReadonlyArray<EvaluationRunRecord> = [
      runRecord({ id: idAt(base) }),
      runRecord({ id: idAt(base + 1), functionName: "extract" }),
      runRecord({ id: idAt(base + 2, 1) }),
      runRecord({ id: idAt(base + 2, 2), functionName: "extract", status: "failed", failure: "no such variant" }),
      runRecord({ id: idAt(base + 3) })
    ]

    /** the indexes in `runs` of what listRuns answers */
    const list = async (query: { functionName?: string; limit?: number; offset?: number } = {}) =>
      (await run(store().listRuns(ws, { limit: 100, offset: 0, ...query }))).map((found) => runs.findIndex((row) => row.id === found.id))

    it("lists every run once, in its last state, newest first, runs of one millisecond by id", async () => {
      // saved out of order; the first one twice
      await run(store().saveRun(ws, running(runs[0], 1)))
      for (const index of [3, 1, 4, 2, 0]) await run(store().saveRun(ws, runs[index]))
      expect(await run(store().listRuns(ws, { limit: 100, offset: 0 }))).toStrictEqual([4, 3, 2, 1, 0].map((index) => runs[index]))
    })

    it("filters by function", async () => {
      expect(await list({ functionName: "extract" })).toEqual([3, 1])
      expect(await list({ functionName: "write_haiku" })).toEqual([4, 2, 0])
      expect(await list({ functionName: "nope" })).toEqual([])
    })

    it("pages with limit and offset", async () => {
      expect(await list({ limit: 2 })).toEqual([4, 3])
      expect(await list({ limit: 2, offset: 2 })).toEqual([2, 1])
      expect(await list({ limit: 2, offset: 4 })).toEqual([0])
      expect(await list({ limit: 2, offset: 5 })).toEqual([])
      expect(await list({ limit: 0 })).toEqual([])
      expect(await list({ functionName: "write_haiku", limit: 1, offset: 1 })).toEqual([2])
    })
  })

  describe("when the server is cut off", () => {
    const suite = storeForSuite(backend)

    it("fails with a one-line StoreError, not a crash; what needs no server is answered without it", async () => {
      const record = runRecord()
      await withCutOffStore(backend, suite.database, async ({ evaluations }) => {
        expect(await run(evaluations.getRun(ws, "nope"))).toBeUndefined()
        expect(await run(evaluations.getResults(ws, "nope", page(10)))).toEqual([])
        expect(await run(evaluations.insertResults(ws, []))).toBeUndefined()
        expect(await run(evaluations.listRuns(ws, { limit: 0, offset: 0 }))).toEqual([])

        for (const effect of [
          evaluations.saveRun(ws, record),
          evaluations.insertResults(ws, [resultRecord(record.id)]),
          evaluations.getRun(ws, record.id),
          evaluations.listRuns(ws, { functionName: "write_haiku", limit: 10, offset: 0 }),
          evaluations.getResults(ws, record.id, page(10))
        ]) {
          const error = await failure(effect as Effect.Effect<unknown, StoreError>)
          expect(error).toBeInstanceOf(StoreError)
          expect(error.message).toMatch(new RegExp(`^${engine} \\w+ failed: \\S`))
          expect(error.message).not.toMatch(/\n|    at /)
        }
      })
    })
  })
})
