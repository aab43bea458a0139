/**
 * layers/tensorzeroImport/clickhouseSource.ts on TensorZero's ClickHouse in its old and latest
 * layouts (test/support/tensorzeroClickHouse.ts): every seeded row read back once, in pages, with
 * TensorZero's values in the neutral shape; a read resumed from a position; a database without
 * TensorZero's tables refused.
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openTensorZeroClickHouse } from "../../layers/tensorzeroImport/clickhouseSource.ts"
import type {
  Position,
  StreamName,
  StreamRows,
  TensorZeroSource,
  TzBatch,
  TzDatapoint,
  TzFeedback,
  TzInference,
  TzModelInference,
  TzWorkflowEpisode,
  TzWorkflowRun,
  UnreadableRow
} from "../../src/tensorzeroImport/source.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import {
  createTensorZeroClickHouse,
  evaluatorMetric,
  ids,
  seedStart,
  seedTensorZeroClickHouse,
  type TensorZeroLayout,
  type TensorZeroSeed,
  insertRows,
  uint128Of,
  uuidV7,
  weatherTool
} from "../support/tensorzeroClickHouse.ts"

const withSource = <A>(url: string, use: (source: TensorZeroSource) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(openTensorZeroClickHouse(url), use)))

/** every row of `stream`, `limit` at a time, checking that the pages follow one another */
const readAll = <S extends StreamName>(source: TensorZeroSource, stream: S, limit: number, from?: Position) =>
  Effect.gen(function*() {
    const rows: Array<StreamRows[S] | UnreadableRow> = []
    let after = from
    for (let pages = 0; pages < 100; pages++) {
      const page = yield* source.page(stream, after, limit)
      expect(page.rows.length).toBeLessThanOrEqual(limit)
      if (page.rows.length === 0) {
        expect(page.last).toBeUndefined()
        return rows
      }
      rows.push(...page.rows)
      after = page.last
    }
    throw new Error(`${stream} did not end`)
  })

const idOf = (stream: StreamName, row: unknown): string => {
  const value = row as Record<string, string>
  if ("unreadable" in value) return value.id
  if (stream === "batches") return value.batchId
  if (stream === "workflow_evaluation_runs" || stream === "evaluation_runs") return value.runId
  if (stream === "workflow_evaluation_episodes") return value.episodeId
  return value.id
}

const byId = <R>(rows: ReadonlyArray<unknown>, stream: StreamName) =>
  new Map(rows.map((row) => [idOf(stream, row), row as R]))

const minutes = (n: number) => seedStart + n * 60_000

const streamsOf = (layout: TensorZeroLayout): Array<StreamName> =>
  layout === "old"
    ? ["datapoints", "inferences", "model_inferences", "feedback", "batches", "dicl_examples"]
    : [
      "datapoints", "inferences", "model_inferences", "feedback", "evaluation_runs", "workflow_evaluation_runs",
      "workflow_evaluation_episodes", "batches", "dicl_examples"
    ]

describe.each(["old", "latest"] as const)("TensorZero ClickHouse, %s layout", (layout) => {
  let database: TestDatabase
  let seed: TensorZeroSeed
  const read: Partial<Record<StreamName, Array<unknown>>> = {}

  beforeAll(async () => {
    database = await freshDatabase("clickhouse")
    await createTensorZeroClickHouse(database, layout)
    seed = await seedTensorZeroClickHouse(database, layout)
    await withSource(database.url, (source) =>
      Effect.gen(function*() {
        expect(source.streams).toEqual(streamsOf(layout))
        expect(source.description).toMatch(layout === "latest" ? /^TensorZero ClickHouse \(migrations through 0049/ : /^TensorZero ClickHouse \(/)
        for (const stream of source.streams) read[stream] = yield* readAll(source, stream, 2)
      }))
  }, 30_000)

  afterAll(() => database?.drop())

  it("reads every seeded row of every stream once, in (at, id) order", () => {
    for (const stream of streamsOf(layout)) {
      const rows = read[stream] ?? []
      expect(rows.filter((row) => "unreadable" in (row as object)), stream).toEqual([])
      const found = rows.map((row) => idOf(stream, row))
      expect([...found].sort(), stream).toEqual([...seed.streams[stream as keyof TensorZeroSeed["streams"]]].sort())
    }
    const times = (read.inferences as Array<TzInference>).map((row) => [row.timestamp, row.id] as const)
    expect(times).toEqual([...times].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1)))
  })

  it("gives inferences TensorZero's values", () => {
    const inferences = byId<TzInference>(read.inferences!, "inferences")
    const plain = inferences.get(ids.chatPlain)!
    expect(plain).toMatchObject({
      kind: "chat",
      functionName: "draft_email",
      variantName: "gpt4o_mini",
      episodeId: ids.episodePlain,
      processingTimeMs: 812,
      tags: { user_id: "u-17" },
      timestamp: minutes(0),
      toolParams: null,
      ttftMs: layout === "latest" ? 120 : null
    })
    expect(JSON.parse(plain.input as string)).toEqual({
      system: { tone: "friendly" },
      messages: [{ role: "user", content: [{ type: "text", text: "Write a short note to Ada about Friday's meeting." }] }]
    })
    expect(JSON.parse(plain.output as string)).toEqual([{ type: "text", text: "Hi Ada, see you on Friday at 10." }])
    expect(JSON.parse(plain.inferenceParams as string)).toEqual({ chat_completion: { temperature: 0.7, max_tokens: 512 } })
    expect(plain.extraBody ?? null).toEqual(
      layout === "latest" ? JSON.stringify([{ variant_name: "gpt4o_mini", pointer: "/service_tier", value: "flex" }]) : null
    )

    const tool = inferences.get(ids.chatTool)!
    expect(JSON.parse(tool.output as string)[1]).toMatchObject({ type: "tool_call", name: "get_temperature", arguments: { location: "Lisbon" } })
    if (layout === "latest") {
      // the columns of migration 0041, in the shape of the older `tool_params`
      expect(tool.toolParams).toEqual({
        tools_available: [weatherTool],
        provider_tools: [],
        allowed_tools: null,
        tool_choice: "auto",
        parallel_tool_calls: true
      })
    } else {
      expect(JSON.parse(tool.toolParams as string)).toEqual({ tools_available: [weatherTool], tool_choice: "auto", parallel_tool_calls: null })
    }

    expect(inferences.get(ids.chatImages)!.processingTimeMs).toBeNull()
    expect(JSON.parse(inferences.get(ids.chatImages)!.output as string)[0]).toMatchObject({ type: "thought" })
    expect(inferences.get(ids.chatEvaluated)!.tags).toEqual({
      "tensorzero::evaluation_run_id": ids.evaluationRun,
      "tensorzero::evaluation_name": "haiku_eval",
      "tensorzero::dataset_name": "haiku_dataset",
      "tensorzero::datapoint_id": ids.datapointCustom
    })

    const extract = inferences.get(ids.jsonExtract)!
    expect(extract).toMatchObject({ kind: "json", functionName: "extract_people", tags: { source: "crm" }, timestamp: minutes(1) })
    expect(JSON.parse(extract.output as string)).toEqual({ raw: "{\"people\":[\"Ada\",\"Grace\",\"Alan\"]}", parsed: { people: ["Ada", "Grace", "Alan"] } })
    expect(JSON.parse(extract.outputSchema as string)).toMatchObject({ required: ["people"] })
    expect(extract.toolParams).toBeUndefined()
    expect(JSON.parse(inferences.get(ids.jsonUnparsed)!.output as string).parsed).toBeNull()
    if (layout === "latest") {
      expect(inferences.get(ids.chatWorkflow)!.tags["tensorzero::workflow_evaluation_run_id"]).toBe(ids.workflowRun)
    }
  })

  it("gives model inferences their usage, timing and cost", () => {
    const models = byId<TzModelInference>(read.model_inferences!, "model_inferences")
    expect(models.get(ids.modelPlain)).toMatchObject({
      inferenceId: ids.chatPlain,
      modelName: "gpt-4o-mini",
      modelProviderName: "openai",
      inputTokens: 42,
      outputTokens: 11,
      responseTimeMs: 640,
      ttftMs: 120,
      system: "You are a helpful assistant.",
      cached: false,
      timestamp: minutes(0),
      finishReason: layout === "latest" ? "stop" : null,
      cost: layout === "latest" ? 0.000123456 : null
    })
    expect(JSON.parse(models.get(ids.modelPlain)!.rawRequest!)).toMatchObject({ model: "gpt-4o-mini" })
    expect(JSON.parse(models.get(ids.modelPlain)!.inputMessages as string)).toHaveLength(1)
    const tool = [...models.values()].filter((row) => row.inferenceId === ids.chatTool)
    expect(tool.map((row) => row.modelProviderName).sort()).toEqual(["anthropic", "bedrock"])
    expect(models.get(ids.modelImages)).toMatchObject(
      layout === "latest" ? { inputTokens: null, outputTokens: null, cached: true } : { inputTokens: 0, outputTokens: 0, cached: false }
    )
    if (layout === "latest") expect(models.get(ids.modelWorkflow)!.finishReason).toBe("stop_sequence")
  })

  it("gives feedback its kind, value, tags and what it targets", () => {
    const feedback = byId<TzFeedback>(read.feedback!, "feedback")
    expect(feedback.get(ids.feedbackSuccess)).toMatchObject({
      kind: "boolean",
      metricName: "task_success",
      targetId: ids.chatPlain,
      targetType: "inference",
      value: true,
      tags: {},
      timestamp: minutes(6)
    })
    expect(feedback.get(ids.feedbackEpisodeSuccess)).toMatchObject({
      kind: "boolean",
      targetId: ids.episodeRated,
      targetType: "episode",
      value: false,
      tags: { reviewer: "ops" }
    })
    expect(feedback.get(ids.feedbackEvaluator)).toMatchObject({
      metricName: evaluatorMetric,
      targetType: "inference",
      tags: { "tensorzero::evaluator_inference_id": ids.judge, "tensorzero::evaluation_run_id": ids.evaluationRun }
    })
    expect(feedback.get(ids.feedbackHuman)!.tags).toEqual({ "tensorzero::human_feedback": "true", "tensorzero::datapoint_id": ids.datapointCustom })
    expect(feedback.get(ids.feedbackRating)).toMatchObject({ kind: "float", metricName: "user_rating", value: 4.5, targetType: "episode" })
    expect(feedback.get(ids.feedbackCommentInference)).toMatchObject({
      kind: "comment",
      metricName: "comment",
      targetId: ids.chatTool,
      targetType: "inference",
      value: "Should have asked which Lisbon."
    })
    expect(feedback.get(ids.feedbackCommentEpisode)).toMatchObject({ kind: "comment", targetId: ids.episodeTool, targetType: "episode" })
    const demonstration = feedback.get(ids.feedbackDemonstration)!
    expect(demonstration).toMatchObject({ kind: "demonstration", metricName: "demonstration", targetId: ids.chatPlain, targetType: "inference" })
    expect(JSON.parse(demonstration.value as string)).toEqual([{ type: "text", text: "Hi Ada, Friday 10:00 works. Best, Bob" }])
  })

  it("gives the latest version of each datapoint, deleted and staled ones marked", () => {
    const datapoints = byId<TzDatapoint>(read.datapoints!, "datapoints")
    for (const [id, updatedAt] of Object.entries(seed.datapointUpdatedAt)) expect(datapoints.get(id)!.updatedAt, id).toBe(updatedAt)
    const edited = datapoints.get(ids.datapointEdited)!
    expect(edited).toMatchObject({
      kind: "chat",
      datasetName: "emails",
      functionName: "draft_email",
      episodeId: ids.episodePlain,
      tags: { reviewed: "yes" },
      staledAt: null,
      isCustom: false,
      toolParams: null,
      name: layout === "latest" ? "friday_note" : null
    })
    expect(JSON.parse(edited.output as string)).toEqual([{ type: "text", text: "Hi Ada, see you Friday at 10." }])
    expect(datapoints.get(ids.datapointDeleted)!.staledAt).toBe(minutes(21))
    expect(datapoints.get(ids.datapointFromInference)).toMatchObject({
      kind: "json",
      datasetName: "people",
      sourceInferenceId: layout === "latest" ? ids.jsonExtract : null,
      staledAt: null
    })
    if (layout === "latest") {
      expect(datapoints.get(ids.datapointStaled)).toMatchObject({
        staledAt: minutes(22),
        toolParams: { tools_available: [weatherTool], provider_tools: [], allowed_tools: null, tool_choice: "auto", parallel_tool_calls: false }
      })
      expect(datapoints.get(ids.datapointCustom)).toMatchObject({ isCustom: true, output: null, datasetName: "haiku_dataset" })
    }
  })

  it("gives each batch its latest status row and its inferences", () => {
    const batches = byId<TzBatch>(read.batches!, "batches")
    const completed = batches.get(ids.batchCompleted)!
    expect(completed).toMatchObject({
      requestId: ids.batchCompletedDone,
      status: "completed",
      functionName: "write_haiku",
      variantName: "batch_v1",
      modelName: "gpt-4o-mini",
      modelProviderName: "openai",
      errors: [],
      timestamp: minutes(7),
      updatedAt: minutes(9)
    })
    expect(JSON.parse(completed.rawResponse!)).toMatchObject({ status: "completed" })
    expect(completed.inferences.map((row) => row.inferenceId)).toEqual([ids.batchInferenceA, ids.batchInferenceB])
    expect(completed.inferences[0]).toMatchObject({
      episodeId: ids.batchEpisodeA,
      functionName: "write_haiku",
      tags: { "tensorzero::batch": "nightly" },
      system: null,
      toolParams: null,
      timestamp: minutes(7)
    })
    const failed = batches.get(ids.batchFailed)!
    expect(failed).toMatchObject({ status: "failed", requestId: ids.batchFailedFailed, errors: [{ message: "quota exceeded" }], updatedAt: minutes(10) })
    expect(failed.inferences.map((row) => row.inferenceId)).toEqual([ids.batchInferenceC])
    // paged on the latest status row
    expect((read.batches as Array<TzBatch>).map((row) => row.batchId)).toEqual([ids.batchCompleted, ids.batchFailed])
  })

  it("gives DICL examples with their embeddings", () => {
    const examples = byId<{ embedding: Array<number>; namespace: string; functionName: string }>(read.dicl_examples!, "dicl_examples")
    expect(examples.get(ids.diclChat)).toMatchObject({ functionName: "draft_email", namespace: "", embedding: [0.25, -0.5, 0.125] })
    expect(examples.get(ids.diclJson)).toMatchObject({ functionName: "extract_people", namespace: "eu", embedding: [1, 0, 0.5] })
  })

  it("resumes after a position, and estimates what is left", async () => {
    await withSource(database.url, (source) =>
      Effect.gen(function*() {
        for (const stream of source.streams) {
          const all = read[stream]!
          const first = yield* source.page(stream, undefined, 3)
          const rest = yield* readAll(source, stream, 1, first.last)
          expect([...first.rows, ...rest], stream).toEqual(all)
          expect(yield* source.estimate(stream, undefined), stream).toBe(all.length)
          if (stream !== "batches") expect(yield* source.estimate(stream, first.last), stream).toBe(rest.length)
        }
      }))
  })

  if (layout === "old") {
    it("holds no workflow evaluations nor evaluation runs (their tables came later)", async () => {
      await withSource(database.url, (source) =>
        Effect.gen(function*() {
          for (const stream of ["workflow_evaluation_runs", "workflow_evaluation_episodes", "evaluation_runs", "api_keys"] as const) {
            expect(yield* source.page(stream, undefined, 10), stream).toEqual({ rows: [], last: undefined })
            expect(yield* source.estimate(stream, undefined), stream).toBeUndefined()
          }
        }))
    })
    return
  }

  it("gives workflow evaluation runs and episodes, and evaluation runs", () => {
    const run = (read.workflow_evaluation_runs as Array<TzWorkflowRun>)[0]!
    expect(run).toEqual({
      runId: ids.workflowRun,
      projectName: "weather",
      displayName: "nightly (fixed)",
      variantPins: { weather_bot: "claude" },
      tags: { "tensorzero::git_commit_hash": "3f9a2c1" },
      staledAt: null,
      timestamp: minutes(4),
      updatedAt: minutes(15)
    })
    const episodes = byId<TzWorkflowEpisode>(read.workflow_evaluation_episodes!, "workflow_evaluation_episodes")
    expect(episodes.get(ids.episodeWorkflow)).toMatchObject({ runId: ids.workflowRun, taskName: "porto", tags: { step: "1" }, staledAt: null })
    expect(episodes.get(ids.episodeWorkflowDeleted)).toMatchObject({ taskName: null, staledAt: minutes(16) })
    expect(read.evaluation_runs).toEqual([{
      runId: ids.evaluationRun,
      evaluationName: "haiku_eval",
      functionName: "write_haiku",
      functionType: "chat",
      datasetName: "haiku_dataset",
      variantNames: ["haiku_v2"],
      metrics: JSON.stringify([{ name: evaluatorMetric, evaluator_name: "exact_match", value_type: "boolean", optimize: "max" }]),
      source: "dataset_name",
      createdAt: minutes(3),
      updatedAt: minutes(17)
    }])
  })

})

describe("a database without TensorZero's tables", () => {
  it("is refused, saying why", async () => {
    const database = await freshDatabase("clickhouse")
    try {
      const exit = await Effect.runPromiseExit(Effect.scoped(openTensorZeroClickHouse(database.url)))
      expect(exit._tag).toBe("Failure")
      expect(JSON.stringify(exit)).toContain("holds no TensorZero tables")
    } finally {
      await database.drop()
    }
  })
})


describe("rows that cannot be read", () => {
  it("come as unreadable rows, and the stream goes on past them", async () => {
    const database = await freshDatabase("clickhouse")
    try {
      await createTensorZeroClickHouse(database, "latest")
      const good = uuidV7(seedStart, 1)
      const later = uuidV7(seedStart + 60_000, 2)
      await insertRows(database, "InferenceEvaluationRuns", [
        evaluationRun(good, "chat", seedStart),
        // TensorZero's column is a free string: a function type the importer does not know
        evaluationRun(later, "embedding", seedStart + 1)
      ])
      await insertRows(database, "DynamicEvaluationRunEpisode", [
        workflowEpisode("not a number", seedStart),
        workflowEpisode(uint128Of(later), seedStart + 1)
      ])
      await withSource(database.url, (source) =>
        Effect.gen(function*() {
          const runs = yield* readAll(source, "evaluation_runs", 1)
          expect(runs.map((row) => idOf("evaluation_runs", row))).toEqual([good, later])
          expect(runs[1]).toEqual({ unreadable: true, id: later, reason: "function_type embedding" })
          const episodes = yield* readAll(source, "workflow_evaluation_episodes", 1)
          expect(episodes).toHaveLength(2)
          expect(episodes[0]).toMatchObject({ unreadable: true, reason: expect.stringContaining("episode_id_uint is not a 128-bit number") })
          expect(episodes[1]).toMatchObject({ episodeId: later, runId: good })
        }))
    } finally {
      await database.drop()
    }
  })
})

const evaluationRun = (runId: string, functionType: string, updatedAt: number) => ({
  run_id_uint: uint128Of(runId),
  evaluation_name: "haiku_eval",
  function_name: "write_haiku",
  function_type: functionType,
  dataset_name: "haiku_dataset",
  variant_names: ["haiku_v2"],
  metrics: "[]",
  source: "dataset_name",
  snapshot_hash: null,
  created_at: updatedAt,
  updated_at: updatedAt
})

const workflowEpisode = (episodeIdUint: string, updatedAtMs: number) => ({
  run_id: uuidV7(seedStart, 1),
  episode_id_uint: episodeIdUint,
  "variant_pins.key": [],
  "variant_pins.value": [],
  datapoint_name: null,
  "tags.key": [],
  "tags.value": [],
  is_deleted: 0,
  updated_at: updatedAtMs * 1000,
  snapshot_hash: null
})
