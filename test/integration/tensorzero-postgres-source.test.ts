/**
 * The TensorZero Postgres source (layers/tensorzeroImport/postgresSource.ts) on TensorZero's
 * 2026 tables (test/fixtures/tensorzero/postgres-2026.sql) filled as TensorZero fills them
 * (test/support/tensorzeroPostgres.ts), on the Postgres server and on PGlite (pgvector).
 */
import { createHash } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { noTensorZeroTables, openTensorZeroPostgres } from "../../layers/tensorzeroImport/postgresSource.ts"
import type { Position, StreamName, StreamRows, TensorZeroSource, UnreadableRow } from "../../src/tensorzeroImport/source.ts"
import { streamNames } from "../../src/tensorzeroImport/source.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { createTensorZeroPostgres, runStatements, seedManyInferences, seedTensorZero, type TensorZeroManifest } from "../support/tensorzeroPostgres.ts"

type Read<S extends StreamName> = StreamRows[S] | UnreadableRow

const isUnreadable = (row: unknown): row is UnreadableRow => typeof row === "object" && row !== null && "unreadable" in row

/** the id of a row as its stream's position names it */
const idOf = (stream: StreamName, row: any): string =>
  isUnreadable(row) ? row.id : stream === "api_keys"
    ? row.publicId
    : stream === "batches"
    ? row.batchId
    : stream === "evaluation_runs" || stream === "workflow_evaluation_runs"
    ? row.runId
    : stream === "workflow_evaluation_episodes"
    ? row.episodeId
    : row.id

const open = async (url: string) => {
  const scope = Effect.runSync(Scope.make())
  const exit = await Effect.runPromiseExit(Scope.provide(scope)(openTensorZeroPostgres(url)))
  return { exit, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

/** every row of `stream`, page by page from `after`, with the position after each page */
const readAll = async <S extends StreamName>(source: TensorZeroSource, stream: S, limit: number, after?: Position) => {
  const rows: Array<Read<S>> = []
  const positions: Array<Position> = []
  let position = after
  for (;;) {
    const page = await Effect.runPromise(source.page(stream, position, limit))
    expect(page.rows.length).toBeLessThanOrEqual(limit)
    if (page.rows.length === 0) {
      expect(page.last).toBeUndefined()
      return { rows, positions }
    }
    rows.push(...page.rows)
    positions.push(page.last!)
    // a position that does not move on would read forever
    expect(positions.length).toBeLessThan(1000)
    position = page.last
  }
}

const byId = <S extends StreamName>(stream: S, rows: ReadonlyArray<Read<S>>) => new Map(rows.map((row) => [idOf(stream, row), row as any]))

for (const backend of ["postgres", "pglite"] as const) {
  describe(`TensorZero Postgres source on ${backend}`, () => {
    let database: TestDatabase
    let manifest: TensorZeroManifest
    let source: TensorZeroSource
    let close: () => Promise<void>
    const read: Partial<Record<StreamName, ReadonlyArray<any>>> = {}

    beforeAll(async () => {
      database = await freshDatabase(backend)
      // PGlite has pgvector: the embeddings are read from a vector column there, from a real[] on the test server
      expect(await createTensorZeroPostgres(database)).toEqual({ embeddingType: backend === "pglite" ? "vector" : "real[]" })
      manifest = await seedTensorZero(database.url)
      const opened = await open(database.url)
      close = opened.close
      if (Exit.isFailure(opened.exit)) throw new Error(String(opened.exit.cause))
      source = opened.exit.value
      for (const stream of streamNames) read[stream] = (await readAll(source, stream, 3)).rows
    }, 60_000)

    afterAll(async () => {
      await close?.()
      await database?.drop()
    })

    it("finds the 2026 layout and every stream", () => {
      expect(source.description).toBe("TensorZero Postgres (2026 layout)")
      expect([...source.streams]).toEqual([...streamNames])
    })

    it("gives every row of every stream exactly once, in (at, id) order", async () => {
      for (const stream of streamNames) {
        const ids = read[stream]!.map((row) => idOf(stream, row))
        expect(ids.length, stream).toBe(new Set(ids).size)
        expect([...ids].sort(), stream).toEqual([...manifest.ids[stream]].sort())
        const { positions } = await readAll(source, stream, 3)
        for (let i = 1; i < positions.length; i++) {
          const [a, b] = [positions[i - 1], positions[i]]
          expect(a.at < b.at || (a.at === b.at && a.id < b.id), `${stream} ${JSON.stringify([a, b])}`).toBe(true)
        }
      }
    })

    it("reads chat and json inferences with their payloads, tool parameters and tags", () => {
      const rows = byId("inferences", read.inferences!)
      const text = rows.get(manifest.inference.text)
      expect(text).toMatchObject({
        kind: "chat",
        functionName: "write_haiku",
        variantName: "gpt_4o_mini",
        episodeId: manifest.episode.chat,
        input: { system: { topic: "artificial intelligence" }, messages: [{ role: "user", content: [{ type: "text", text: "Write a haiku about artificial intelligence." }] }] },
        output: [{ type: "text" }],
        processingTimeMs: 812,
        ttftMs: 140,
        tags: {},
        timestamp: manifest.start + 10
      })
      expect(rows.get(manifest.inference.toolCall)).toMatchObject({
        output: [{ type: "thought" }, { type: "tool_call", name: "get_temperature", arguments: { location: "Tokyo" }, raw_arguments: "{\"location\":\"Tokyo\"}" }],
        toolParams: {
          tools_available: [{ name: "get_temperature" }],
          provider_tools: [],
          allowed_tools: { tools: ["get_temperature"], choice: "dynamic_allowed_tools" },
          tool_choice: { specific: "get_temperature" },
          parallel_tool_calls: false
        }
      })
      expect(rows.get(manifest.inference.imageStored).input.messages[0].content[1]).toMatchObject({
        type: "file",
        mime_type: "image/jpeg",
        storage_path: { kind: { type: "s3_compatible" } }
      })
      const dropped = rows.get(manifest.inference.payloadDropped)
      expect(dropped.input).toBeUndefined()
      expect(dropped.output).toBeUndefined()
      expect(dropped.toolParams).toBeUndefined()
      expect(dropped.functionName).toBe("write_haiku")
      expect(rows.get(manifest.inference.judge)).toMatchObject({
        kind: "json",
        functionName: "tensorzero::llm_judge::haiku_eval::topic_starts_with_f",
        output: { raw: "{\"score\":false}", parsed: { score: false } },
        outputSchema: { properties: { score: { type: "boolean" } } },
        tags: { "tensorzero::evaluation_run_id": manifest.evaluationRun }
      })
      expect(rows.get(manifest.inference.evaluated).tags["tensorzero::evaluation_name"]).toBe("haiku_eval")
      expect(rows.get(manifest.inference.badTags)).toEqual({ unreadable: true, id: manifest.inference.badTags, reason: expect.stringContaining("tags") })
      expect(read.inferences!.filter(isUnreadable).map((row) => row.id)).toEqual(manifest.unreadable)
    })

    it("reads model inferences with cost and cache tokens, without the payload retention dropped", () => {
      const rows = read.model_inferences!
      const ofText = rows.find((row) => row.inferenceId === manifest.inference.text)
      expect(ofText).toMatchObject({
        inputTokens: 57,
        outputTokens: 23,
        cacheReadInputTokens: 12,
        cacheWriteInputTokens: null,
        cost: 0.00012345,
        modelName: "gpt-4o-mini-2024-07-18",
        modelProviderName: "openai",
        cached: false,
        finishReason: "stop",
        system: "You are a poet."
      })
      expect(JSON.parse(ofText.rawRequest).model).toBe("gpt-4o-mini")
      expect(rows.find((row) => row.inferenceId === manifest.inference.toolCall).cost).toBeNull()
      const dropped = rows.find((row) => row.inferenceId === manifest.inference.payloadDropped)
      expect(dropped.rawRequest).toBeUndefined()
      expect(dropped.cost).toBe(0.0001)
    })

    it("reads the four kinds of feedback, naming an inference or an episode", () => {
      const rows = byId("feedback", read.feedback!)
      expect(rows.get(manifest.feedback.booleanOnInference)).toMatchObject({ kind: "boolean", metricName: "haiku_rating", targetType: "inference", value: true })
      expect(rows.get(manifest.feedback.booleanOnEpisode)).toMatchObject({
        kind: "boolean",
        targetId: manifest.episode.chat,
        targetType: "episode",
        value: false,
        tags: { source: "nightly" }
      })
      expect(rows.get(manifest.feedback.floatOnEpisode)).toMatchObject({ kind: "float", targetType: "episode", value: 4.5 })
      expect(rows.get(manifest.feedback.evaluatorScore)).toMatchObject({
        kind: "float",
        metricName: "tensorzero::evaluation_name::haiku_eval::evaluator_name::topic_starts_with_f",
        targetId: manifest.inference.evaluated,
        targetType: "inference",
        value: 0,
        tags: { "tensorzero::evaluator_inference_id": manifest.inference.judge }
      })
      expect(rows.get(manifest.feedback.commentOnEpisode)).toMatchObject({ kind: "comment", metricName: "comment", targetType: "episode", value: "The user gave up after two tries." })
      expect(rows.get(manifest.feedback.demonstration)).toMatchObject({
        kind: "demonstration",
        metricName: "demonstration",
        targetId: manifest.inference.text,
        targetType: "inference",
        value: [{ type: "text" }]
      })
    })

    it("reads rows written within one millisecond one by one, none skipped or repeated", async () => {
      const { rows } = await readAll(source, "feedback", 1)
      const ids = rows.map((row) => idOf("feedback", row))
      expect(ids.length).toBe(manifest.ids.feedback.length)
      expect(new Set(ids)).toEqual(new Set(manifest.ids.feedback))
      // microseconds apart within one millisecond: in time order, not id order
      const order = manifest.feedback.sameMillisecond
      expect(ids.filter((id) => order.includes(id))).toEqual([order[1], order[2], order[0]])
      const keys = (await readAll(source, "api_keys", 1)).rows.map((row) => idOf("api_keys", row))
      expect(keys.length).toBe(manifest.keys.length)
      expect(new Set(keys)).toEqual(new Set(manifest.ids.api_keys))
      const inferences = (await readAll(source, "inferences", 1)).rows.map((row) => idOf("inferences", row))
      expect(inferences.filter((id) => manifest.inference.sameMillisecond.includes(id))).toEqual(manifest.inference.sameMillisecond)
    })

    it("reads datapoints live, stale and edited, with tool parameters or output schema", () => {
      const rows = byId("datapoints", read.datapoints!)
      expect(rows.get(manifest.datapoint.chat)).toMatchObject({
        kind: "chat",
        datasetName: "haikus",
        functionName: "write_haiku",
        name: "rain",
        sourceInferenceId: manifest.inference.text,
        isCustom: false,
        staledAt: null,
        toolParams: { tools_available: [], provider_tools: [], allowed_tools: null, tool_choice: null, parallel_tool_calls: null }
      })
      expect(rows.get(manifest.datapoint.stale).staledAt).toBe(manifest.start + 400)
      expect(rows.get(manifest.datapoint.editedOld).staledAt).toBe(manifest.start + 500)
      expect(rows.get(manifest.datapoint.editedNew)).toMatchObject({ isCustom: true, staledAt: null, output: [{ type: "text", text: "Morning fog lingers" }] })
      expect(rows.get(manifest.datapoint.json)).toMatchObject({
        kind: "json",
        datasetName: "entities",
        output: { parsed: { person: "Grace Hopper", city: "Arlington" } },
        outputSchema: { required: ["person", "city"] }
      })
      expect(rows.get(manifest.datapoint.json).toolParams).toBeUndefined()
    })

    it("reads evaluation runs, workflow evaluation runs and their episodes", () => {
      expect(read.evaluation_runs).toEqual([expect.objectContaining({
        runId: manifest.evaluationRun,
        evaluationName: "haiku_eval",
        functionName: "write_haiku",
        functionType: "chat",
        datasetName: "haikus",
        variantNames: ["gpt_4o_mini"],
        source: "dataset_name",
        updatedAt: manifest.start + 100 + 900
      })])
      const runs = byId("workflow_evaluation_runs", read.workflow_evaluation_runs!)
      expect(runs.get(manifest.workflowRun.live)).toMatchObject({
        projectName: "beerqa",
        displayName: "prompt v2",
        variantPins: { write_haiku: "gpt_4o_mini", extract_entities: "gpt_4o_mini_json" },
        tags: { experiment: "prompt-v2" },
        staledAt: null
      })
      expect(runs.get(manifest.workflowRun.staled).staledAt).toBe(manifest.start + 700)
      const episodes = byId("workflow_evaluation_episodes", read.workflow_evaluation_episodes!)
      const [first, second, third] = manifest.episode.workflow
      expect(episodes.get(first)).toMatchObject({
        runId: manifest.workflowRun.live,
        taskName: "task-0",
        variantPins: { write_haiku: "gpt_4o_mini" },
        tags: { "tensorzero::workflow_evaluation_run_id": manifest.workflowRun.live }
      })
      expect(episodes.get(second).taskName).toBeNull()
      expect(episodes.get(third)).toMatchObject({ runId: manifest.workflowRun.staled, staledAt: manifest.start + 700 })
    })

    it("reads a batch as its latest request row with its inferences", () => {
      const rows = byId("batches", read.batches!)
      const completed = rows.get(manifest.batch.completed)
      expect(completed).toMatchObject({
        status: "completed",
        functionName: "write_haiku",
        variantName: "gpt_4o_mini_batch",
        modelProviderName: "openai",
        rawResponse: "{\"id\":\"batch_abc\",\"status\":\"completed\"}",
        timestamp: manifest.start + 800,
        updatedAt: manifest.start + 1200
      })
      expect(completed.inferences.map((inference: any) => inference.inferenceId)).toEqual(manifest.batch.completedInferences)
      expect(completed.inferences[0]).toMatchObject({
        input: { system: { topic: "tides" } },
        system: "You are a poet.",
        toolParams: { tools_available: [{ name: "get_temperature" }], tool_choice: "auto", parallel_tool_calls: true },
        tags: { batch: "nightly" }
      })
      const pending = rows.get(manifest.batch.pending)
      expect(pending).toMatchObject({ status: "pending", updatedAt: manifest.start + 900 })
      expect(pending.rawRequest).toBeUndefined()
      expect(pending.inferences.map((inference: any) => inference.inferenceId)).toEqual(manifest.batch.pendingInferences)
      // ordered by the latest request row: the completed batch changed last
      expect(read.batches!.map((row) => row.batchId)).toEqual([manifest.batch.pending, manifest.batch.completed])
    })

    it("reads keys with their hash, disabled and expiry times", () => {
      const rows = byId("api_keys", read.api_keys!)
      for (const key of manifest.keys) {
        const row = rows.get(key.publicId)
        const secret = key.key.split("-")[3]
        expect(row.hash).toBe(createHash("sha256").update(secret).digest("hex"))
        expect(row.publicId).toBe(key.key.split("-")[2])
        expect(row.disabledAt === null).toBe(key.state !== "disabled")
        expect(row).toMatchObject({ organization: "acme", workspace: "default", description: `${key.state} key` })
      }
      const expired = rows.get(manifest.keys.find((key) => key.state === "expired")!.publicId)
      expect(expired.expiresAt).toBe(manifest.start - 1000)
    })

    it("reads DICL examples with their embeddings, their text as stored", () => {
      const rows = byId("dicl_examples", read.dicl_examples!)
      const example = rows.get(manifest.dicl.examples[0])
      expect(example).toMatchObject({ functionName: "write_haiku", variantName: "dicl", namespace: "", embedding: manifest.dicl.embedding })
      expect(JSON.parse(example.input).messages[0].role).toBe("user")
      expect(rows.get(manifest.dicl.garbageInput).input).toBe("{messages: [unterminated")
    })

    it("resumes from a position: the rest, and an estimate of it", async () => {
      const all = read.inferences!.map((row) => idOf("inferences", row))
      const first = await Effect.runPromise(source.page("inferences", undefined, 7))
      const rest = await readAll(source, "inferences", 4, first.last)
      expect([...first.rows, ...rest.rows].map((row) => idOf("inferences", row))).toEqual(all)
      expect(await Effect.runPromise(source.estimate("inferences", undefined))).toBe(all.length)
      expect(await Effect.runPromise(source.estimate("inferences", first.last))).toBe(all.length - 7)
      expect(await Effect.runPromise(source.estimate("batches", undefined))).toBe(2)
      // a position survives a round trip through JSON (a checkpoint), microseconds included
      const position = JSON.parse(JSON.stringify(first.last))
      const again = await Effect.runPromise(source.page("inferences", position, 1))
      expect(idOf("inferences", again.rows[0])).toBe(all[7])
      const feedback = read.feedback!.map((row) => idOf("feedback", row))
      const firstFeedback = await Effect.runPromise(source.page("feedback", undefined, 9))
      const restFeedback = await readAll(source, "feedback", 2, JSON.parse(JSON.stringify(firstFeedback.last)))
      expect([...firstFeedback.rows, ...restFeedback.rows].map((row) => idOf("feedback", row))).toEqual(feedback)
    })

    it("from a position with an empty id (where a later run restarts), gives every row from its time on, each once", async () => {
      for (const stream of streamNames) {
        const all = read[stream]!.map((row) => idOf(stream, row))
        expect((await readAll(source, stream, 3, { at: 0, id: "" })).rows.map((row) => idOf(stream, row)), stream).toEqual(all)
        const { positions } = await readAll(source, stream, 2)
        if (positions.length < 2) continue
        const middle = positions[Math.floor(positions.length / 2) - 1]
        const after = (await readAll(source, stream, 2, middle)).rows.map((row) => idOf(stream, row))
        const from = (await readAll(source, stream, 2, { at: middle.at, id: "" })).rows.map((row) => idOf(stream, row))
        // the rows after the position, and before them at least the row it ends at: a tail of the stream
        expect(from, stream).toEqual(all.slice(all.length - from.length))
        expect(from.length, stream).toBeGreaterThan(after.length)
        expect(from.slice(from.length - after.length), stream).toEqual(after)
      }
    })
  })
}

describe("TensorZero Postgres source, refusals and volume", () => {
  it("refuses a database without TensorZero's tables, and the singular-name prototype", async () => {
    const database = await freshDatabase("postgres")
    try {
      const empty = await open(database.url)
      await empty.close()
      expect(empty.exit).toEqual(Exit.fail(expect.objectContaining({ _tag: "SourceError", message: noTensorZeroTables })))
      await runStatements(database.url, ["CREATE SCHEMA tensorzero", "CREATE TABLE tensorzero.chat_inference (id uuid PRIMARY KEY)"])
      const prototype = await open(database.url)
      await prototype.close()
      expect(prototype.exit).toEqual(Exit.fail(expect.objectContaining({ message: expect.stringContaining("prototype") })))
    } finally {
      await database.drop()
    }
  })

  it("reads an earlier 2026 release's tables and a fork's extra columns, and says which streams it lacks", async () => {
    const database = await freshDatabase("postgres")
    try {
      await createTensorZeroPostgres(database)
      const manifest = await seedTensorZero(database.url)
      await runStatements(database.url, [
        // before the cache token and cost columns, the task_name rename, key expiry and evaluation run tables
        "ALTER TABLE tensorzero.model_inferences DROP COLUMN cost, DROP COLUMN provider_cache_read_input_tokens, DROP COLUMN provider_cache_write_input_tokens",
        "ALTER TABLE tensorzero.workflow_evaluation_run_episodes RENAME COLUMN task_name TO datapoint_name",
        "ALTER TABLE public.tensorzero_auth_api_key DROP COLUMN expires_at",
        "ALTER TABLE public.tensorzero_auth_api_key SET SCHEMA tensorzero",
        "DROP TABLE tensorzero.inference_evaluation_runs",
        // a fork's column
        "ALTER TABLE tensorzero.chat_inferences ADD COLUMN error TEXT"
      ])
      const opened = await open(database.url)
      try {
        const source = Exit.isSuccess(opened.exit) ? opened.exit.value : expect.unreachable(String(opened.exit))
        expect(source.streams).not.toContain("evaluation_runs")
        expect(source.streams).toContain("api_keys")
        const missing = await Effect.runPromiseExit(source.page("evaluation_runs", undefined, 3))
        expect(missing).toEqual(Exit.fail(expect.objectContaining({ message: expect.stringContaining("no evaluation_runs") })))
        const models = (await readAll(source, "model_inferences", 5)).rows
        expect(models.length).toBe(manifest.ids.model_inferences.length)
        expect(models.every((row: any) => row.cost === null && row.cacheReadInputTokens === null)).toBe(true)
        const episodes = byId("workflow_evaluation_episodes", (await readAll(source, "workflow_evaluation_episodes", 5)).rows)
        expect(episodes.get(manifest.episode.workflow[0]).taskName).toBe("task-0")
        const keys = (await readAll(source, "api_keys", 2)).rows
        expect(keys.map((row: any) => row.publicId).sort()).toEqual([...manifest.ids.api_keys].sort())
        expect(keys.every((row: any) => row.expiresAt === null)).toBe(true)
        expect((await readAll(source, "inferences", 5)).rows.length).toBe(manifest.ids.inferences.length)
      } finally {
        await opened.close()
      }
    } finally {
      await database.drop()
    }
  })

  it("reads inferences written in bulk, ten per millisecond, each once", async () => {
    const database = await freshDatabase("postgres")
    try {
      await createTensorZeroPostgres(database)
      await seedManyInferences(database.url, 2000)
      const opened = await open(database.url)
      try {
        const source = Exit.isSuccess(opened.exit) ? opened.exit.value : expect.unreachable(String(opened.exit))
        expect(await Effect.runPromise(source.estimate("inferences", undefined))).toBe(2000)
        const inferences = await readAll(source, "inferences", 300)
        expect(new Set(inferences.rows.map((row) => idOf("inferences", row))).size).toBe(2000)
        expect(inferences.rows.every((row) => !isUnreadable(row) && row.input !== undefined)).toBe(true)
        const models = await readAll(source, "model_inferences", 700)
        expect(new Set(models.rows.map((row) => idOf("model_inferences", row))).size).toBe(2000)
      } finally {
        await opened.close()
      }
    } finally {
      await database.drop()
    }
  })
})
