/**
 * The conformance suite of the workflow evaluation store (`WorkflowEvaluationStore` of
 * src/workflowEvaluations/store.ts): the same tests against the ClickHouse adapter and the
 * Postgres adapter, each on a real server in a database of its own: exact round trips, an
 * episode found by its id with its run, listings (order, project, paging, rows written twice
 * seen once), the feedback of a run's episodes and of their inferences summed up per metric,
 * and StoreErrors (not crashes) when the server is cut off.
 * The Postgres adapter runs twice: on the Postgres server and on the embedded database (PGlite).
 */
import { describe, expect, it } from "vitest"
import { uuidv7, uuidv7Timestamp } from "../../src/ids.ts"
import { StoreError } from "../../src/storeError.ts"
import { mintRunEpisodeId } from "../../src/workflowEvaluations/episodeIds.ts"
import type { WorkflowEpisodeRecord, WorkflowRunRecord } from "../../src/workflowEvaluations/store.ts"
import { engineOf } from "../support/databases.ts"
import { batch, chatInference, failure, feedback, idAt, jsonInference, oddStrings, run, storeForSuite, withCutOffStore, write } from "../support/storeFixtures.ts"

/** the workspace the suite writes and reads in (test/integration/workspaces-datasets.test.ts checks the isolation) */
const ws = "default"

/** a run, complete unless `fields` leaves a field out (as `undefined`) */
const runRecord = (fields: Partial<WorkflowRunRecord> = {}): WorkflowRunRecord => {
  const id = fields.id ?? uuidv7(Date.now())
  const record: Record<string, unknown> = {
    id,
    variants: { write_haiku: "gpt", extract: "strict" },
    projectName: "haikus",
    displayName: "first try",
    tags: { team: "red", round: "1" },
    timestamp: uuidv7Timestamp(id),
    ...fields
  }
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as unknown as WorkflowRunRecord
}

const episodeRecord = (runId: string, fields: Partial<WorkflowEpisodeRecord> = {}): WorkflowEpisodeRecord => {
  const id = fields.id ?? mintRunEpisodeId(Date.now())
  const record: Record<string, unknown> = {
    id,
    runId,
    taskName: "task one",
    tags: { step: "a" },
    timestamp: uuidv7Timestamp(id),
    ...fields
  }
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as unknown as WorkflowEpisodeRecord
}

/** a project name no other test uses */
const projectNamed = (name: string) => `${name} ${uuidv7(Date.now()).slice(-12)}`

describe.each(["clickhouse", "postgres", "pglite"] as const)("%s workflow evaluation store", (backend) => {
  /** the adapters' backend, which the errors name: PGlite is reached with the Postgres ones */
  const engine = engineOf(backend)

  describe("runs and episodes", () => {
    const suite = storeForSuite(backend)
    const store = () => suite.store.workflowEvaluations

    it("reads back runs and episodes as written, optional fields present and absent", async () => {
      const full = runRecord()
      const bare = runRecord({ variants: {}, projectName: undefined, displayName: undefined, tags: {} })
      await run(store().insertRun(ws, full))
      await run(store().insertRun(ws, bare))
      expect(await run(store().getRun(ws, full.id))).toStrictEqual(full)
      const readBare = await run(store().getRun(ws, bare.id))
      expect(readBare).toStrictEqual(bare)
      for (const field of ["projectName", "displayName"]) expect(field in readBare!).toBe(false)
      expect(await run(store().getRun(ws, uuidv7(Date.now())))).toBeUndefined()

      const episode = episodeRecord(full.id)
      const bareEpisode = episodeRecord(full.id, { taskName: undefined, tags: {} })
      await run(store().insertEpisode(ws, episode))
      await run(store().insertEpisode(ws, bareEpisode))
      expect(await run(store().findEpisode(ws, episode.id))).toStrictEqual({ episode, run: full })
      const found = await run(store().findEpisode(ws, bareEpisode.id))
      expect(found).toStrictEqual({ episode: bareEpisode, run: full })
      expect("taskName" in found!.episode).toBe(false)
      expect(await run(store().findEpisode(ws, mintRunEpisodeId(Date.now())))).toBeUndefined()
      // a run is not an episode
      expect(await run(store().findEpisode(ws, full.id))).toBeUndefined()
    })

    it("strings with quotes, backslashes, newlines, placeholders, control characters and unicode round-trip", async () => {
      for (const [index, value] of oddStrings.entries()) {
        const record = runRecord({
          variants: { [value]: value, [`fn ${index}`]: `${value} variant` },
          projectName: value,
          displayName: value,
          tags: { [value]: value, [`key ${index}`]: "" }
        })
        const episode = episodeRecord(record.id, { taskName: value, tags: { [value]: value } })
        await run(store().insertRun(ws, record))
        await run(store().insertEpisode(ws, episode))
        expect(await run(store().findEpisode(ws, episode.id))).toStrictEqual({ episode, run: record })
        expect(await run(store().listRuns(ws, { projectName: value, limit: 10, offset: 0 }))).toStrictEqual([record])
      }
    })

    it("lists runs newest first, of one project when asked, a page at a time, each once", async () => {
      const project = projectNamed("listed")
      const base = Date.now() - 60_000
      // two in one millisecond: the id orders them
      const runs = [0, 1000, 2000, 2000, 3000].map((offset, index) =>
        runRecord({ id: idAt(base + offset, index), projectName: project, timestamp: base + offset })
      )
      const elsewhere = runRecord({ projectName: projectNamed("elsewhere") })
      for (const record of [...runs, elsewhere]) await run(store().insertRun(ws, record))
      // written again (a retried call): still one run
      await run(store().insertRun(ws, runs[1]))

      const newestFirst = [...runs].reverse()
      expect(await run(store().listRuns(ws, { projectName: project, limit: 10, offset: 0 }))).toStrictEqual(newestFirst)
      expect(await run(store().listRuns(ws, { projectName: project, limit: 2, offset: 1 }))).toStrictEqual(newestFirst.slice(1, 3))
      expect(await run(store().listRuns(ws, { projectName: project, limit: 10, offset: 5 }))).toEqual([])
      expect(await run(store().listRuns(ws, { projectName: "no such project", limit: 10, offset: 0 }))).toEqual([])
      const all = await run(store().listRuns(ws, { limit: 1000, offset: 0 }))
      expect(all.map((record) => record.id)).toEqual(expect.arrayContaining([...runs, elsewhere].map((record) => record.id)))
      expect(all.filter((record) => record.id === runs[1].id)).toHaveLength(1)
      const times = all.map((record) => record.timestamp)
      expect([...times].sort((a, b) => b - a)).toEqual(times)
      expect(all[0]).toStrictEqual(elsewhere)
    })

    it("lists a run's episodes oldest first, a page at a time, each once", async () => {
      const record = runRecord()
      const other = runRecord()
      await run(store().insertRun(ws, record))
      await run(store().insertRun(ws, other))
      const base = Date.now() - 60_000
      const episodes = [0, 10, 10, 20].map((offset, index) => {
        const id = `${idAt(base + offset, index).slice(0, 32)}${mintRunEpisodeId(0).slice(32)}`
        return episodeRecord(record.id, { id, taskName: `task ${index}`, timestamp: base + offset })
      })
      for (const episode of [...episodes].reverse()) await run(store().insertEpisode(ws, episode))
      await run(store().insertEpisode(ws, episodes[0]))
      await run(store().insertEpisode(ws, episodeRecord(other.id)))

      expect(await run(store().listEpisodes(ws, record.id, { limit: 10, offset: 0 }))).toStrictEqual(episodes)
      expect(await run(store().listEpisodes(ws, record.id, { limit: 2, offset: 1 }))).toStrictEqual(episodes.slice(1, 3))
      expect(await run(store().listEpisodes(ws, uuidv7(Date.now()), { limit: 10, offset: 0 }))).toEqual([])
    })

    it("refuses ids that are not UUIDs with a StoreError", async () => {
      for (const effect of [
        store().getRun(ws, "nope"),
        store().findEpisode(ws, "'; DROP TABLE WorkflowEvaluationRun; --"),
        store().listEpisodes(ws, "nope", { limit: 1, offset: 0 }),
        store().metricSummaries(ws, "nope"),
        store().insertRun(ws, runRecord({ id: "nope" })),
        store().insertEpisode(ws, episodeRecord("nope"))
      ]) {
        const error = await failure(effect)
        expect(error).toBeInstanceOf(StoreError)
        expect(error.message).toContain("not a UUID")
      }
    })
  })

  describe("metric summaries", () => {
    const suite = storeForSuite(backend)
    const store = () => suite.store.workflowEvaluations

    it("count and average the feedback on a run's episodes and on their inferences, per metric, each feedback once", async () => {
      const record = runRecord()
      const other = runRecord()
      const [first, second] = [episodeRecord(record.id), episodeRecord(record.id)]
      const outside = episodeRecord(other.id)
      const empty = runRecord()
      for (const r of [record, other, empty]) await run(store().insertRun(ws, r))
      for (const episode of [first, second, outside]) await run(store().insertEpisode(ws, episode))

      const chat = chatInference({ episodeId: first.id })
      const json = jsonInference({ episodeId: second.id })
      const stray = chatInference({ episodeId: outside.id })
      // an inference of an episode of no run
      const unrelated = chatInference()
      const onEpisode = (id: string) => ({ targetType: "episode" as const, targetId: id })
      const twice = feedback("float", chat.id, 0.25, { metricName: "quality" })
      await run(write(suite.store, batch({
        inferences: [chat, json, stray, unrelated],
        feedback: [
          feedback("boolean", chat.id, true, { metricName: "solved" }),
          feedback("boolean", json.id, false, { metricName: "solved" }),
          feedback("boolean", first.id, true, { metricName: "solved", ...onEpisode(first.id) }),
          twice,
          feedback("float", second.id, 1, { metricName: "quality", ...onEpisode(second.id) }),
          feedback("comment", first.id, "fine", { ...onEpisode(first.id) }),
          feedback("comment", json.id, "also fine"),
          feedback("demonstration", json.id, { answer: "x" }),
          // not the run's
          feedback("boolean", stray.id, false, { metricName: "solved" }),
          feedback("float", outside.id, 100, { metricName: "quality", ...onEpisode(outside.id) }),
          feedback("float", unrelated.id, 100, { metricName: "quality" }),
          feedback("comment", unrelated.episodeId, "nope", { metricName: "elsewhere", ...onEpisode(unrelated.episodeId) })
        ]
      })))
      // a retried write: the same feedback again
      await run(write(suite.store, batch({ feedback: [twice] })))

      const summaries = await run(store().metricSummaries(ws, record.id))
      expect(summaries.map((summary) => summary.metricName)).toEqual(["comment", "demonstration", "quality", "solved"])
      const byName = Object.fromEntries(summaries.map((summary) => [summary.metricName, summary]))
      expect(byName.solved.count).toBe(3)
      expect(byName.solved.mean).toBeCloseTo(2 / 3, 12)
      expect(byName.quality.count).toBe(2)
      expect(byName.quality.mean).toBeCloseTo(0.625, 12)
      expect(byName.comment).toStrictEqual({ metricName: "comment", count: 2 })
      expect(byName.demonstration).toStrictEqual({ metricName: "demonstration", count: 1 })

      expect(await run(store().metricSummaries(ws, other.id))).toEqual([
        { metricName: "quality", count: 1, mean: 100 },
        { metricName: "solved", count: 1, mean: 0 }
      ])
      expect(await run(store().metricSummaries(ws, empty.id))).toEqual([])
      expect(await run(store().metricSummaries(ws, uuidv7(Date.now())))).toEqual([])
    })
  })

  describe("servers that cannot be reached", () => {
    const suite = storeForSuite(backend)

    it("fails with a one-line StoreError, not a crash, while the server is cut off", async () => {
      const record = runRecord()
      await withCutOffStore(backend, suite.database, async ({ workflowEvaluations }) => {
        const started = Date.now()
        for (const effect of [
          workflowEvaluations.insertRun(ws, record),
          workflowEvaluations.insertEpisode(ws, episodeRecord(record.id)),
          workflowEvaluations.getRun(ws, record.id),
          workflowEvaluations.findEpisode(ws, mintRunEpisodeId(Date.now())),
          workflowEvaluations.listRuns(ws, { projectName: "x", limit: 10, offset: 0 }),
          workflowEvaluations.listEpisodes(ws, record.id, { limit: 10, offset: 0 }),
          workflowEvaluations.metricSummaries(ws, record.id)
        ]) {
          const error = await failure(effect)
          expect(error).toBeInstanceOf(StoreError)
          expect(error.message).toMatch(new RegExp(`^${engine} \\w+ failed: \\S`))
          expect(error.message).not.toMatch(/\n|    at /)
        }
        expect(Date.now() - started).toBeLessThan(10_000)
      })
    })
  })
})
