/**
 * A TensorZero deployment's ClickHouse, for the importer's tests: TensorZero's tables in an old
 * layout (an early-2025 release) or the latest one (test/fixtures/tensorzero/clickhouse-*.sql,
 * on the 18.16 of the tests, with the type substitutions listed there), and rows written the
 * way TensorZero writes them: its StoredInput JSON, chat and json outputs, `tensorzero::` tags,
 * evaluation and workflow-evaluation runs, datapoint versions, batch status rows.
 */
import { createClient } from "@clickhouse/client"
import * as fs from "node:fs"
import * as path from "node:path"
import type { TestDatabase } from "./databases.ts"

export type TensorZeroLayout = "old" | "latest"

const fixtures = path.join(import.meta.dirname, "..", "fixtures", "tensorzero")

/** the fixture's statements, comments left out */
export const tensorZeroStatements = (layout: TensorZeroLayout): Array<string> =>
  fs.readFileSync(path.join(fixtures, `clickhouse-${layout}.sql`), "utf8")
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("--"))
    .join("\n")
    .split(/;\s*$/m)
    .map((statement) => statement.trim())
    .filter((statement) => statement !== "")

const clientOf = (database: TestDatabase) => {
  const url = new URL(database.url)
  return createClient({
    url: url.origin,
    username: decodeURIComponent(url.username) || "default",
    password: decodeURIComponent(url.password),
    database: database.name
  })
}

/** TensorZero's tables of `layout` in `database` (a fresh ClickHouse database) */
export const createTensorZeroClickHouse = async (database: TestDatabase, layout: TensorZeroLayout): Promise<void> => {
  const client = clientOf(database)
  try {
    for (const statement of tensorZeroStatements(layout)) await client.command({ query: statement })
  } finally {
    await client.close()
  }
}

/** rows into one of the tables, as JSONEachRow (Nested columns as their `<name>.key` and `<name>.value` arrays) */
export const insertRows = async (database: TestDatabase, table: string, values: Array<Record<string, unknown>>): Promise<void> => {
  const client = clientOf(database)
  try {
    await client.insert({ table, values, format: "JSONEachRow" })
  } finally {
    await client.close()
  }
}

/** a UUIDv7 of time `ms`, told apart by `serial` */
export const uuidV7 = (ms: number, serial: number): string => {
  const time = ms.toString(16).padStart(12, "0")
  const tail = serial.toString(16).padStart(12, "0")
  return `${time.slice(0, 8)}-${time.slice(8)}-7${serial.toString(16).padStart(3, "0").slice(-3)}-8000-${tail}`
}

/** the UUID as the decimal of its big-endian 128-bit number: what `toUInt128(uuid)` stores */
export const uint128Of = (uuid: string): string => BigInt(`0x${uuid.replaceAll("-", "")}`).toString(10)

/** 2025-04-14T23:07:50Z, the seed's first moment */
export const seedStart = 1_744_672_070_000

const at = (minutes: number) => seedStart + minutes * 60_000

const json = (value: unknown) => JSON.stringify(value)

const userText = (text: string, system?: unknown) =>
  json({ ...(system === undefined ? {} : { system }), messages: [{ role: "user", content: [{ type: "text", text }] }] })

const nested = (record: Record<string, string>, name = "tags") => ({
  [`${name}.key`]: Object.keys(record),
  [`${name}.value`]: Object.values(record)
})

export const ids = {
  chatPlain: uuidV7(at(0), 1),
  chatTool: uuidV7(at(1), 2),
  chatImages: uuidV7(at(2), 3),
  chatEvaluated: uuidV7(at(3), 4),
  judge: uuidV7(at(3), 5),
  chatWorkflow: uuidV7(at(4), 6),
  jsonExtract: uuidV7(at(1), 7),
  jsonUnparsed: uuidV7(at(5), 8),
  episodePlain: uuidV7(at(0), 101),
  episodeTool: uuidV7(at(1), 102),
  episodeRated: uuidV7(at(0), 103),
  episodeWorkflow: uuidV7(at(4), 104),
  episodeWorkflowDeleted: uuidV7(at(4), 105),
  evaluationRun: uuidV7(at(3), 201),
  workflowRun: uuidV7(at(4), 202),
  datapointEdited: uuidV7(at(2), 301),
  datapointDeleted: uuidV7(at(2), 302),
  datapointStaled: uuidV7(at(2), 303),
  datapointFromInference: uuidV7(at(2), 304),
  datapointCustom: uuidV7(at(2), 305),
  modelPlain: uuidV7(at(0), 401),
  modelToolFallback: uuidV7(at(1), 402),
  modelTool: uuidV7(at(1), 403),
  modelImages: uuidV7(at(2), 404),
  modelEvaluated: uuidV7(at(3), 405),
  modelJudge: uuidV7(at(3), 406),
  modelWorkflow: uuidV7(at(4), 407),
  modelExtract: uuidV7(at(1), 408),
  modelUnparsed: uuidV7(at(5), 409),
  feedbackSuccess: uuidV7(at(6), 501),
  feedbackEpisodeSuccess: uuidV7(at(6), 502),
  feedbackEvaluator: uuidV7(at(6), 503),
  feedbackRating: uuidV7(at(6), 504),
  feedbackCommentInference: uuidV7(at(6), 505),
  feedbackCommentEpisode: uuidV7(at(6), 506),
  feedbackDemonstration: uuidV7(at(6), 507),
  feedbackHuman: uuidV7(at(6), 508),
  batchCompleted: uuidV7(at(7), 601),
  batchCompletedPending: uuidV7(at(7), 602),
  batchCompletedDone: uuidV7(at(9), 603),
  batchFailed: uuidV7(at(8), 604),
  batchFailedPending: uuidV7(at(8), 605),
  batchFailedFailed: uuidV7(at(10), 606),
  batchInferenceA: uuidV7(at(7), 607),
  batchInferenceB: uuidV7(at(7), 608),
  batchInferenceC: uuidV7(at(8), 609),
  batchEpisodeA: uuidV7(at(7), 610),
  batchEpisodeB: uuidV7(at(7), 611),
  batchEpisodeC: uuidV7(at(8), 612),
  diclChat: uuidV7(at(11), 701),
  diclJson: uuidV7(at(11), 702)
} as const

/** what was seeded, for the assertions: the ids each stream holds, in the ids the neutral rows carry */
export interface TensorZeroSeed {
  readonly layout: TensorZeroLayout
  readonly streams: {
    readonly inferences: ReadonlyArray<string>
    readonly model_inferences: ReadonlyArray<string>
    readonly feedback: ReadonlyArray<string>
    readonly datapoints: ReadonlyArray<string>
    readonly batches: ReadonlyArray<string>
    readonly dicl_examples: ReadonlyArray<string>
    readonly workflow_evaluation_runs: ReadonlyArray<string>
    readonly workflow_evaluation_episodes: ReadonlyArray<string>
    readonly evaluation_runs: ReadonlyArray<string>
  }
  /** datapoint id -> updated_at (ms) of the version that must be read */
  readonly datapointUpdatedAt: Readonly<Record<string, number>>
}

export const weatherTool = {
  name: "get_temperature",
  description: "Get the current temperature in a given location",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
  strict: false
}

const extractSchema = { type: "object", properties: { people: { type: "array", items: { type: "string" } } }, required: ["people"] }

const evaluationTags = {
  "tensorzero::evaluation_run_id": ids.evaluationRun,
  "tensorzero::evaluation_name": "haiku_eval",
  "tensorzero::dataset_name": "haiku_dataset",
  "tensorzero::datapoint_id": ids.datapointCustom
}

export const evaluatorMetric = "tensorzero::evaluation_name::haiku_eval::evaluator_name::exact_match"

/** a row of TensorZero's ChatInference, with the columns `layout` has */
const chatInference = (layout: TensorZeroLayout, row: {
  id: string
  function_name: string
  variant_name: string
  episode_id: string
  input: string
  output: unknown
  tool_params?: string
  tags?: Record<string, string>
  processing_time_ms?: number | null
  ttft_ms?: number | null
  extra_body?: string | null
  tools?: { dynamic: Array<unknown>; choice: string; parallel: boolean | null }
}) => ({
  id: row.id,
  function_name: row.function_name,
  variant_name: row.variant_name,
  episode_id: row.episode_id,
  input: row.input,
  output: json(row.output),
  tool_params: row.tool_params ?? "",
  inference_params: json({ chat_completion: { temperature: 0.7, max_tokens: 512 } }),
  processing_time_ms: row.processing_time_ms === undefined ? 812 : row.processing_time_ms,
  ...nested(row.tags ?? {}),
  ...(layout === "latest"
    ? {
      extra_body: row.extra_body ?? null,
      ttft_ms: row.ttft_ms ?? null,
      dynamic_tools: (row.tools?.dynamic ?? []).map(json),
      dynamic_provider_tools: [],
      allowed_tools: null,
      tool_choice: row.tools === undefined ? null : json(row.tools.choice),
      parallel_tool_calls: row.tools === undefined || row.tools.parallel === null ? null : row.tools.parallel ? 1 : 0,
      snapshot_hash: null
    }
    : {})
})

const modelInference = (layout: TensorZeroLayout, row: {
  id: string
  inference_id: string
  model_name: string
  model_provider_name: string
  output: unknown
  input_tokens: number | null
  output_tokens: number | null
  cached?: boolean
  finish_reason?: string | null
  cost?: number | null
  ttft_ms?: number | null
}) => ({
  id: row.id,
  inference_id: row.inference_id,
  raw_request: json({ model: row.model_name, messages: [{ role: "user", content: "..." }] }),
  raw_response: json({ id: "chatcmpl-1", choices: [{ message: { role: "assistant", content: "..." } }] }),
  model_name: row.model_name,
  model_provider_name: row.model_provider_name,
  // before migration 0015 the token counts could not be null
  input_tokens: layout === "old" ? row.input_tokens ?? 0 : row.input_tokens,
  output_tokens: layout === "old" ? row.output_tokens ?? 0 : row.output_tokens,
  response_time_ms: 640,
  ttft_ms: row.ttft_ms ?? null,
  system: "You are a helpful assistant.",
  input_messages: json([{ role: "user", content: [{ type: "text", text: "..." }] }]),
  output: json(row.output),
  ...(layout === "latest"
    ? { cached: row.cached ? 1 : 0, finish_reason: row.finish_reason ?? null, snapshot_hash: null, cost: row.cost ?? null }
    : {})
})

const latestOnly = (layout: TensorZeroLayout, row: Record<string, unknown>) =>
  layout === "latest" ? { ...row, snapshot_hash: null } : row

/**
 * Fills `database` (made by createTensorZeroClickHouse with the same layout) with TensorZero's
 * rows of every kind the layout holds.
 */
export const seedTensorZeroClickHouse = async (database: TestDatabase, layout: TensorZeroLayout): Promise<TensorZeroSeed> => {
  const latest = layout === "latest"
  const client = clientOf(database)
  const insert = (table: string, values: Array<Record<string, unknown>>) =>
    client.insert({ table, values, format: "JSONEachRow" })
  try {
    await insert("ChatInference", [
      chatInference(layout, {
        id: ids.chatPlain,
        function_name: "draft_email",
        variant_name: "gpt4o_mini",
        episode_id: ids.episodePlain,
        input: userText("Write a short note to Ada about Friday's meeting.", { tone: "friendly" }),
        output: [{ type: "text", text: "Hi Ada, see you on Friday at 10." }],
        tags: { user_id: "u-17" },
        ttft_ms: 120,
        extra_body: latest ? json([{ variant_name: "gpt4o_mini", pointer: "/service_tier", value: "flex" }]) : null
      }),
      chatInference(layout, {
        id: ids.chatTool,
        function_name: "weather_bot",
        variant_name: "claude",
        episode_id: ids.episodeTool,
        input: userText("What's the temperature in Lisbon?"),
        output: [
          { type: "text", text: "Let me check." },
          {
            type: "tool_call",
            id: "call_1",
            name: "get_temperature",
            raw_name: "get_temperature",
            arguments: { location: "Lisbon" },
            raw_arguments: "{\"location\":\"Lisbon\"}"
          }
        ],
        tool_params: json({ tools_available: [weatherTool], tool_choice: "auto", parallel_tool_calls: null }),
        // newer releases write the dynamic tools to the columns of migration 0041 as well
        ...(latest ? { tools: { dynamic: [weatherTool], choice: "auto", parallel: true } } : {}),
        tags: { "tensorzero::variant_pinned": "false" }
      }),
      chatInference(layout, {
        id: ids.chatImages,
        function_name: "describe_image",
        variant_name: "gpt4o",
        episode_id: ids.episodePlain,
        input: json({
          messages: [{
            role: "user",
            content: [
              { type: "text", text: "What differs between these two?" },
              { type: "image", image: { url: "https://example.com/cat.png", mime_type: "image/png" } },
              {
                type: "image",
                image: { url: null, mime_type: "image/jpeg" },
                storage_path: {
                  kind: { type: "s3_compatible", bucket_name: "tensorzero-files", region: "us-east-1", endpoint: null },
                  path: "observability/images/4f1c9e.jpg"
                }
              }
            ]
          }]
        }),
        output: [
          { type: "thought", text: "The first is a cat, the second a dog.", signature: "sig-1" },
          { type: "text", text: "One shows a cat, the other a dog." }
        ],
        processing_time_ms: null
      }),
      chatInference(layout, {
        id: ids.chatEvaluated,
        function_name: "write_haiku",
        variant_name: "haiku_v2",
        episode_id: uuidV7(at(3), 106),
        input: userText("Write a haiku about autumn."),
        output: [{ type: "text", text: "Red leaves drift and fall" }],
        tags: evaluationTags
      }),
      chatInference(layout, {
        id: ids.judge,
        function_name: "tensorzero::llm_judge::haiku_eval::exact_match",
        variant_name: "judge",
        episode_id: uuidV7(at(3), 107),
        input: userText("Does the haiku match the reference?"),
        output: [{ type: "text", text: "{\"score\":true}" }],
        tags: { "tensorzero::evaluation_run_id": ids.evaluationRun, "tensorzero::evaluation_name": "haiku_eval" }
      }),
      ...(latest
        ? [chatInference(layout, {
          id: ids.chatWorkflow,
          function_name: "weather_bot",
          variant_name: "claude",
          episode_id: ids.episodeWorkflow,
          input: userText("And in Porto?"),
          output: [{ type: "text", text: "17 degrees." }],
          tags: {
            "tensorzero::dynamic_evaluation_run_id": ids.workflowRun,
            "tensorzero::workflow_evaluation_run_id": ids.workflowRun,
            "tensorzero::git_commit_hash": "3f9a2c1"
          }
        })]
        : [])
    ])
    await insert("JsonInference", [
      {
        id: ids.jsonExtract,
        function_name: "extract_people",
        variant_name: "gpt4o_mini",
        episode_id: ids.episodeTool,
        input: userText("Ada met Grace and Alan."),
        output: json({ raw: "{\"people\":[\"Ada\",\"Grace\",\"Alan\"]}", parsed: { people: ["Ada", "Grace", "Alan"] } }),
        output_schema: json(extractSchema),
        inference_params: json({ chat_completion: { json_mode: "strict" } }),
        processing_time_ms: 433,
        ...nested({ source: "crm" }),
        ...(latest ? { extra_body: null, auxiliary_content: "[]", ttft_ms: 95, snapshot_hash: null } : {})
      },
      {
        id: ids.jsonUnparsed,
        function_name: "extract_people",
        variant_name: "gpt4o_mini",
        episode_id: uuidV7(at(5), 108),
        input: userText("Nobody here."),
        output: json({ raw: "people: none", parsed: null }),
        output_schema: json(extractSchema),
        inference_params: json({ chat_completion: {} }),
        processing_time_ms: 390,
        ...nested({}),
        ...(latest ? { extra_body: null, auxiliary_content: "[]", ttft_ms: null, snapshot_hash: null } : {})
      }
    ])
    await insert("ModelInference", [
      modelInference(layout, { id: ids.modelPlain, inference_id: ids.chatPlain, model_name: "gpt-4o-mini", model_provider_name: "openai", output: [{ type: "text", text: "Hi Ada" }], input_tokens: 42, output_tokens: 11, finish_reason: "stop", cost: 0.000123456, ttft_ms: 120 }),
      // a fallback: the first provider's answer was cut off, the second one finished
      modelInference(layout, { id: ids.modelToolFallback, inference_id: ids.chatTool, model_name: "claude-sonnet", model_provider_name: "anthropic", output: [], input_tokens: 80, output_tokens: 0, finish_reason: "length" }),
      modelInference(layout, { id: ids.modelTool, inference_id: ids.chatTool, model_name: "claude-sonnet", model_provider_name: "bedrock", output: [{ type: "tool_call", name: "get_temperature" }], input_tokens: 80, output_tokens: 25, finish_reason: "tool_call", cost: 0.0021 }),
      modelInference(layout, { id: ids.modelImages, inference_id: ids.chatImages, model_name: "gpt-4o", model_provider_name: "openai", output: [], input_tokens: null, output_tokens: null, cached: true, finish_reason: "stop" }),
      modelInference(layout, { id: ids.modelEvaluated, inference_id: ids.chatEvaluated, model_name: "gpt-4o", model_provider_name: "openai", output: [], input_tokens: 20, output_tokens: 9, finish_reason: "stop" }),
      modelInference(layout, { id: ids.modelJudge, inference_id: ids.judge, model_name: "gpt-4o-mini", model_provider_name: "openai", output: [], input_tokens: 60, output_tokens: 4, finish_reason: "stop" }),
      ...(latest
        ? [modelInference(layout, { id: ids.modelWorkflow, inference_id: ids.chatWorkflow, model_name: "claude-sonnet", model_provider_name: "anthropic", output: [], input_tokens: 30, output_tokens: 5, finish_reason: "stop_sequence" })]
        : []),
      modelInference(layout, { id: ids.modelExtract, inference_id: ids.jsonExtract, model_name: "gpt-4o-mini", model_provider_name: "openai", output: [], input_tokens: 35, output_tokens: 14, finish_reason: "stop" }),
      modelInference(layout, { id: ids.modelUnparsed, inference_id: ids.jsonUnparsed, model_name: "gpt-4o-mini", model_provider_name: "openai", output: [], input_tokens: 12, output_tokens: 3, finish_reason: "content_filter" })
    ])
    await insert("BooleanMetricFeedback", [
      latestOnly(layout, { id: ids.feedbackSuccess, target_id: ids.chatPlain, metric_name: "task_success", value: 1, ...nested({}) }),
      latestOnly(layout, { id: ids.feedbackEpisodeSuccess, target_id: ids.episodeRated, metric_name: "episode_success", value: 0, ...nested({ reviewer: "ops" }) }),
      latestOnly(layout, {
        id: ids.feedbackEvaluator,
        target_id: ids.chatEvaluated,
        metric_name: evaluatorMetric,
        value: 1,
        ...nested({ ...evaluationTags, "tensorzero::evaluator_inference_id": ids.judge })
      }),
      latestOnly(layout, {
        id: ids.feedbackHuman,
        target_id: ids.chatEvaluated,
        metric_name: evaluatorMetric,
        value: 0,
        ...nested({ "tensorzero::human_feedback": "true", "tensorzero::datapoint_id": ids.datapointCustom })
      })
    ])
    await insert("FloatMetricFeedback", [
      latestOnly(layout, { id: ids.feedbackRating, target_id: ids.episodeTool, metric_name: "user_rating", value: 4.5, ...nested({}) })
    ])
    await insert("CommentFeedback", [
      latestOnly(layout, { id: ids.feedbackCommentInference, target_id: ids.chatTool, target_type: "inference", value: "Should have asked which Lisbon.", ...nested({}) }),
      latestOnly(layout, { id: ids.feedbackCommentEpisode, target_id: ids.episodeTool, target_type: "episode", value: "Good conversation overall.", ...nested({ "tensorzero::human_feedback": "true" }) })
    ])
    await insert("DemonstrationFeedback", [
      latestOnly(layout, {
        id: ids.feedbackDemonstration,
        inference_id: ids.chatPlain,
        value: json([{ type: "text", text: "Hi Ada, Friday 10:00 works. Best, Bob" }]),
        ...nested({})
      })
    ])

    const micros = (ms: number) => ms * 1000 + 123
    const datapoint = (row: Record<string, unknown>, kind: "chat" | "json", extra: Record<string, unknown> = {}) => ({
      episode_id: null,
      auxiliary: "",
      is_deleted: 0,
      ...(kind === "chat" ? { tool_params: "" } : { output_schema: json(extractSchema) }),
      ...nested({}),
      ...row,
      ...(latest
        ? {
          staled_at: null,
          source_inference_id: null,
          is_custom: 0,
          name: null,
          ...(kind === "chat"
            ? { dynamic_tools: [], dynamic_provider_tools: [], allowed_tools: null, tool_choice: null, parallel_tool_calls: null }
            : {}),
          snapshot_hash: null,
          ...extra
        }
        : {})
    })
    const editedAt = at(20)
    await insert("ChatInferenceDatapoint", [
      datapoint({
        dataset_name: "emails",
        function_name: "draft_email",
        id: ids.datapointEdited,
        episode_id: ids.episodePlain,
        input: userText("Write a short note to Ada about Friday's meeting."),
        output: json([{ type: "text", text: "Hi Ada, Friday." }]),
        updated_at: micros(at(12))
      }, "chat"),
      datapoint({
        dataset_name: "emails",
        function_name: "draft_email",
        id: ids.datapointDeleted,
        input: userText("Decline the invitation."),
        output: json([{ type: "text", text: "Sorry, I cannot come." }]),
        updated_at: micros(at(12))
      }, "chat")
    ])
    // later versions of the same keys: an edit, a deletion, and (latest) a staled datapoint
    await insert("ChatInferenceDatapoint", [
      datapoint({
        dataset_name: "emails",
        function_name: "draft_email",
        id: ids.datapointEdited,
        episode_id: ids.episodePlain,
        input: userText("Write a short note to Ada about Friday's meeting."),
        output: json([{ type: "text", text: "Hi Ada, see you Friday at 10." }]),
        ...nested({ reviewed: "yes" }),
        updated_at: micros(editedAt)
      }, "chat", { name: "friday_note" }),
      datapoint({
        dataset_name: "emails",
        function_name: "draft_email",
        id: ids.datapointDeleted,
        input: userText("Decline the invitation."),
        output: json([{ type: "text", text: "Sorry, I cannot come." }]),
        is_deleted: 1,
        updated_at: micros(at(21))
      }, "chat"),
      ...(latest
        ? [datapoint({
          dataset_name: "weather",
          function_name: "weather_bot",
          id: ids.datapointStaled,
          input: userText("Temperature in Oslo?"),
          output: json([{ type: "text", text: "3 degrees" }]),
          updated_at: micros(at(22))
        }, "chat", {
          staled_at: micros(at(22)),
          dynamic_tools: [json(weatherTool)],
          tool_choice: json("auto"),
          parallel_tool_calls: 0
        })]
        : [])
    ])
    await insert("JsonInferenceDatapoint", [
      datapoint({
        dataset_name: "people",
        function_name: "extract_people",
        id: ids.datapointFromInference,
        episode_id: ids.episodeTool,
        input: userText("Ada met Grace and Alan."),
        output: json({ raw: "{\"people\":[\"Ada\",\"Grace\",\"Alan\"]}", parsed: { people: ["Ada", "Grace", "Alan"] } }),
        updated_at: micros(at(13))
      }, "json", { source_inference_id: ids.jsonExtract, name: "three people" }),
      ...(latest
        ? [datapoint({
          dataset_name: "haiku_dataset",
          function_name: "extract_people",
          id: ids.datapointCustom,
          input: userText("Nobody at all."),
          output: null,
          updated_at: micros(at(14))
        }, "json", { is_custom: 1 })]
        : [])
    ])

    const batchRequest = (row: Record<string, unknown>) =>
      latestOnly(layout, {
        batch_params: json({ inputs: [], tags: [] }),
        model_name: "gpt-4o-mini",
        model_provider_name: "openai",
        errors: [],
        raw_request: "",
        raw_response: "",
        function_name: "write_haiku",
        variant_name: "batch_v1",
        ...row
      })
    await insert("BatchRequest", [
      batchRequest({ batch_id: ids.batchCompleted, id: ids.batchCompletedPending, status: "pending", raw_request: json({ input_file_id: "file-1" }), raw_response: json({ id: "batch_abc", status: "validating" }) }),
      batchRequest({ batch_id: ids.batchCompleted, id: ids.batchCompletedDone, status: "completed", raw_response: json({ id: "batch_abc", status: "completed", output_file_id: "file-2" }) }),
      batchRequest({ batch_id: ids.batchFailed, id: ids.batchFailedPending, status: "pending" }),
      batchRequest({ batch_id: ids.batchFailed, id: ids.batchFailedFailed, status: "failed", errors: [json({ message: "quota exceeded" })] })
    ])
    const batchInference = (inferenceId: string, batchId: string, episodeId: string, text: string) => ({
      inference_id: inferenceId,
      batch_id: batchId,
      function_name: "write_haiku",
      variant_name: "batch_v1",
      episode_id: episodeId,
      input: userText(text),
      input_messages: json([{ role: "user", content: [{ type: "text", text }] }]),
      system: null,
      tool_params: null,
      inference_params: json({ chat_completion: {} }),
      raw_request: json({ custom_id: inferenceId }),
      model_name: "gpt-4o-mini",
      model_provider_name: "openai",
      output_schema: null,
      ...nested({ "tensorzero::batch": "nightly" }),
      ...(latest
        ? { dynamic_tools: [], dynamic_provider_tools: [], allowed_tools: null, tool_choice: null, parallel_tool_calls: null, snapshot_hash: null }
        : {})
    })
    await insert("BatchModelInference", [
      batchInference(ids.batchInferenceA, ids.batchCompleted, ids.batchEpisodeA, "A haiku about rain."),
      batchInference(ids.batchInferenceB, ids.batchCompleted, ids.batchEpisodeB, "A haiku about snow."),
      batchInference(ids.batchInferenceC, ids.batchFailed, ids.batchEpisodeC, "A haiku about wind.")
    ])
    await insert("DynamicInContextLearningExample", [
      {
        id: ids.diclChat,
        function_name: "draft_email",
        variant_name: "dicl",
        namespace: "",
        input: userText("Thank Grace for the review."),
        output: json([{ type: "text", text: "Thanks for the review, Grace!" }]),
        embedding: [0.25, -0.5, 0.125]
      },
      {
        id: ids.diclJson,
        function_name: "extract_people",
        variant_name: "dicl",
        namespace: "eu",
        input: userText("Marie and Pierre."),
        output: json({ raw: "{\"people\":[\"Marie\",\"Pierre\"]}", parsed: { people: ["Marie", "Pierre"] } }),
        embedding: [1, 0, 0.5]
      }
    ])
    if (latest) {
      const run = (row: Record<string, unknown>) => ({ project_name: "weather", snapshot_hash: null, is_deleted: 0, ...row })
      await insert("DynamicEvaluationRun", [
        run({ run_id_uint: uint128Of(ids.workflowRun), ...nested({ claude: "weather_bot" }, "variant_pins"), ...nested({}), run_display_name: "nightly", updated_at: micros(at(4)) })
      ])
      // the run renamed afterwards: a newer version
      await insert("DynamicEvaluationRun", [
        run({
          run_id_uint: uint128Of(ids.workflowRun),
          ...nested({ weather_bot: "claude" }, "variant_pins"),
          ...nested({ "tensorzero::git_commit_hash": "3f9a2c1" }),
          run_display_name: "nightly (fixed)",
          updated_at: micros(at(15))
        })
      ])
      const episode = (row: Record<string, unknown>) => ({
        run_id: ids.workflowRun,
        ...nested({}, "variant_pins"),
        ...nested({}),
        snapshot_hash: null,
        is_deleted: 0,
        ...row
      })
      await insert("DynamicEvaluationRunEpisode", [
        episode({ episode_id_uint: uint128Of(ids.episodeWorkflow), datapoint_name: "porto", ...nested({ step: "1" }), updated_at: micros(at(4)) }),
        episode({ episode_id_uint: uint128Of(ids.episodeWorkflowDeleted), datapoint_name: null, is_deleted: 1, updated_at: micros(at(16)) })
      ])
      await insert("InferenceEvaluationRuns", [{
        run_id_uint: uint128Of(ids.evaluationRun),
        evaluation_name: "haiku_eval",
        function_name: "write_haiku",
        function_type: "chat",
        dataset_name: "haiku_dataset",
        variant_names: ["haiku_v2"],
        metrics: json([{ name: evaluatorMetric, evaluator_name: "exact_match", value_type: "boolean", optimize: "max" }]),
        source: "dataset_name",
        snapshot_hash: null,
        created_at: at(3),
        updated_at: at(17)
      }])
      await insert("TensorZeroMigration", [{
        migration_id: 49,
        migration_name: "Migration0049",
        gateway_version: "2026.5.0",
        gateway_git_sha: "0000000",
        applied_at: micros(at(-60)),
        execution_time_ms: 12,
        extra_data: null
      }])
    }
  } finally {
    await client.close()
  }

  const inferences = [ids.chatPlain, ids.chatTool, ids.chatImages, ids.chatEvaluated, ids.judge, ids.jsonExtract, ids.jsonUnparsed, ...(latest ? [ids.chatWorkflow] : [])]
  return {
    layout,
    streams: {
      inferences,
      model_inferences: [
        ids.modelPlain, ids.modelToolFallback, ids.modelTool, ids.modelImages, ids.modelEvaluated, ids.modelJudge, ids.modelExtract,
        ids.modelUnparsed, ...(latest ? [ids.modelWorkflow] : [])
      ],
      feedback: [
        ids.feedbackSuccess, ids.feedbackEpisodeSuccess, ids.feedbackEvaluator, ids.feedbackHuman, ids.feedbackRating,
        ids.feedbackCommentInference, ids.feedbackCommentEpisode, ids.feedbackDemonstration
      ],
      datapoints: [
        ids.datapointEdited, ids.datapointDeleted, ids.datapointFromInference, ...(latest ? [ids.datapointStaled, ids.datapointCustom] : [])
      ],
      batches: [ids.batchCompleted, ids.batchFailed],
      dicl_examples: [ids.diclChat, ids.diclJson],
      workflow_evaluation_runs: latest ? [ids.workflowRun] : [],
      workflow_evaluation_episodes: latest ? [ids.episodeWorkflow, ids.episodeWorkflowDeleted] : [],
      evaluation_runs: latest ? [ids.evaluationRun] : []
    },
    datapointUpdatedAt: {
      [ids.datapointEdited]: at(20),
      [ids.datapointDeleted]: at(21),
      [ids.datapointFromInference]: at(13),
      ...(latest ? { [ids.datapointStaled]: at(22), [ids.datapointCustom]: at(14) } : {})
    }
  }
}
