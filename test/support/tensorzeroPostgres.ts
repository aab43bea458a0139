/**
 * A TensorZero deployment's Postgres (its 2026 layout) for the import's tests:
 * `createTensorZeroPostgres` builds TensorZero's tables (test/fixtures/tensorzero/postgres-2026.sql)
 * in a fresh test database, `seedTensorZero` fills them with rows of every kind the way
 * TensorZero writes them and returns a manifest of what it wrote, and `seedManyInferences` adds
 * n chat inferences in a few statements (for a benchmark).
 */
import { createHash, randomBytes } from "node:crypto"
import { readFile } from "node:fs/promises"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { makePgClient } from "../../layers/postgres/client.ts"
import { splitStatements } from "../../layers/postgres/migrator.ts"
import type { TestDatabase } from "./databases.ts"

const fixtureFile = new URL("../fixtures/tensorzero/postgres-2026.sql", import.meta.url)

/** runs `use` with a client of `url`, closed after */
const withClient = async <A>(url: string, use: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>): Promise<A> => {
  const scope = Effect.runSync(Scope.make())
  try {
    return await Effect.runPromise(Scope.provide(scope)(Effect.flatMap(makePgClient(url), use)))
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const runAll = (sql: PgClient.PgClient, statements: ReadonlyArray<string>) =>
  Effect.forEach(statements, (statement) => sql.unsafe(statement).unprepared, { discard: true })

/** runs `statements` on the database at `url`, one after the other */
export const runStatements = (url: string, statements: ReadonlyArray<string>): Promise<void> => withClient(url, (sql) => runAll(sql, statements))

/**
 * TensorZero's tables in `database`; DICL embeddings are pgvector's `vector` where the extension
 * can be created (PGlite), a `real[]` otherwise (the test Postgres has no pgvector).
 */
export const createTensorZeroPostgres = async (database: TestDatabase): Promise<{ readonly embeddingType: "vector" | "real[]" }> => {
  const script = await readFile(fixtureFile, "utf8")
  return withClient(database.url, (sql) =>
    Effect.gen(function*() {
      const available = yield* sql<{ name: string }>`SELECT name FROM pg_available_extensions WHERE name = 'vector'`
      const embeddingType = available.length > 0 ? "vector" as const : "real[]" as const
      if (embeddingType === "vector") yield* sql`CREATE EXTENSION IF NOT EXISTS vector`.unprepared
      yield* runAll(sql, splitStatements(script.replaceAll("__EMBEDDING_TYPE__", embeddingType)))
      return { embeddingType }
    }))
}

// ---- values as TensorZero writes them

/** a UUIDv7 of time `ms`; `n` orders ids within one millisecond */
export const uuidv7 = (ms: number, n: number): string => {
  const hex = ms.toString(16).padStart(12, "0") + "7" + (n >> 16 & 0xfff).toString(16).padStart(3, "0") + "8" +
    (n & 0xffff).toString(16).padStart(15, "0")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
const randomAlphanumeric = (length: number) => Array.from(randomBytes(length), (byte) => alphanumeric[byte % alphanumeric.length]).join("")

/** a key as TensorZero issues it (`sk-t0-<12 alnum>-<48 alnum>`) and what it stores: sha256 hex of the secret part */
const issueKey = () => {
  const publicId = randomAlphanumeric(10) + "Qa" // mixed case whatever the draw
  const secret = randomAlphanumeric(48)
  return { key: `sk-t0-${publicId}-${secret}`, publicId, hash: createHash("sha256").update(secret).digest("hex") }
}

/** a SQL literal of a string */
const text = (value: string | null | undefined) => value === null || value === undefined ? "NULL" : `'${value.replaceAll("'", "''")}'`
const jsonb = (value: unknown) => value === undefined ? "NULL" : `${text(JSON.stringify(value))}::jsonb`
const time = (ms: number | null | undefined, extraMicros = 0) =>
  ms === null || ms === undefined ? "NULL" : `(timestamptz 'epoch' + interval '1 microsecond' * ${ms * 1000 + extraMicros})`

const userText = (value: string) => ({ role: "user", content: [{ type: "text", text: value }] })
const assistantText = (value: string) => ({ role: "assistant", content: [{ type: "text", text: value }] })

const s3Storage = (path: string) => ({
  kind: { type: "s3_compatible", bucket_name: "tensorzero-observability", region: "us-east-1", endpoint: null, allow_http: null, prefix: "" },
  path
})

const weatherTool = {
  name: "get_temperature",
  description: "Get the current temperature in a city",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"], additionalProperties: false },
  strict: false
}

const chatParams = { chat_completion: { temperature: 0.7, max_tokens: 400, seed: null, top_p: null } }
const jsonParams = { chat_completion: { temperature: 0.2, json_mode: "strict" } }

const extractionSchema = {
  type: "object",
  properties: { person: { type: "string" }, city: { type: "string" } },
  required: ["person", "city"],
  additionalProperties: false
}

// ---- the seed

export interface SeededKey {
  readonly key: string
  readonly publicId: string
  readonly hash: string
  readonly state: "active" | "disabled" | "expired"
}

export interface TensorZeroManifest {
  readonly keys: ReadonlyArray<SeededKey>
  /** the ids each stream should give (keys: public ids; batches: batch ids; runs and episodes: their ids) */
  readonly ids: { readonly [S in
    | "api_keys" | "datapoints" | "inferences" | "model_inferences" | "feedback" | "evaluation_runs"
    | "workflow_evaluation_runs" | "workflow_evaluation_episodes" | "batches" | "dicl_examples"]: ReadonlyArray<string> }
  /** ids the source cannot put into the neutral shape (their tags are not strings) */
  readonly unreadable: ReadonlyArray<string>
  readonly inference: {
    readonly text: string
    readonly toolCall: string
    readonly imageByUrl: string
    readonly imageStored: string
    /** its payload was dropped by retention: metadata only */
    readonly payloadDropped: string
    readonly evaluated: string
    readonly judge: string
    readonly extraction: string
    /** chat inferences written in one millisecond */
    readonly sameMillisecond: ReadonlyArray<string>
    readonly badTags: string
  }
  readonly episode: { readonly chat: string; readonly workflow: ReadonlyArray<string> }
  readonly feedback: {
    readonly booleanOnInference: string
    readonly booleanOnEpisode: string
    readonly floatOnEpisode: string
    readonly evaluatorScore: string
    readonly commentOnEpisode: string
    readonly demonstration: string
    /** feedback rows written within one millisecond, microseconds apart */
    readonly sameMillisecond: ReadonlyArray<string>
  }
  readonly datapoint: { readonly chat: string; readonly json: string; readonly stale: string; readonly editedOld: string; readonly editedNew: string }
  readonly evaluationRun: string
  readonly workflowRun: { readonly live: string; readonly staled: string }
  readonly batch: { readonly completed: string; readonly completedInferences: ReadonlyArray<string>; readonly pending: string; readonly pendingInferences: ReadonlyArray<string> }
  readonly dicl: { readonly examples: ReadonlyArray<string>; readonly garbageInput: string; readonly embedding: ReadonlyArray<number> }
  /** the time of the first seeded row (epoch ms) */
  readonly start: number
}

export interface SeedOptions {
  /** the time of the first row; 2026-03-10T12:00:00Z by default (in the monthly partition) */
  readonly start?: number
}

/** Fills TensorZero's tables at `url` with rows of every kind, as TensorZero writes them. */
export const seedTensorZero = async (url: string, options: SeedOptions = {}): Promise<TensorZeroManifest> => {
  const start = options.start ?? Date.UTC(2026, 2, 10, 12, 0, 0)
  const statements: Array<string> = []
  let counter = 0
  /** a new UUIDv7 `offset` ms after the start */
  const id = (offset: number) => uuidv7(start + offset, ++counter)
  const msOf = (uuid: string) => parseInt(uuid.replaceAll("-", "").slice(0, 12), 16)

  // keys: active, disabled, expired
  const keys: Array<SeededKey> = [
    { ...issueKey(), state: "active" },
    { ...issueKey(), state: "disabled" },
    { ...issueKey(), state: "expired" },
    { ...issueKey(), state: "active" }
  ]
  keys.forEach((key, index) => {
    // the last key is created with the first, in the same microsecond
    const created = start - 86_400_000 + (index % 3) * 1000
    const disabled = key.state === "disabled" ? created + 3_600_000 : null
    statements.push(`INSERT INTO tensorzero_auth_api_key (organization, workspace, description, public_id, hash, disabled_at, created_at, updated_at, expires_at)
      VALUES ('acme', 'default', ${text(`${key.state} key`)}, ${text(key.publicId)}, ${text(key.hash)}, ${time(disabled, 123)}, ${time(created, 456)},
      ${time(disabled ?? created, disabled === null ? 456 : 123)}, ${time(key.state === "expired" ? start - 1000 : key.state === "active" ? start + 365 * 86_400_000 : null)})`)
  })

  const chatEpisode = id(0)
  const chat = (inferenceId: string, row: {
    functionName?: string
    variantName?: string
    episodeId?: string
    input: unknown
    output: unknown
    tags?: Record<string, unknown>
    tools?: { dynamic: ReadonlyArray<unknown>; allowed?: unknown; choice?: unknown; parallel?: boolean }
    dropPayload?: boolean
  }) => {
    const at = time(msOf(inferenceId))
    statements.push(`INSERT INTO tensorzero.chat_inferences (id, function_name, variant_name, episode_id, processing_time_ms, ttft_ms, tags, created_at, api_key_public_id)
      VALUES ('${inferenceId}', ${text(row.functionName ?? "write_haiku")}, ${text(row.variantName ?? "gpt_4o_mini")}, '${row.episodeId ?? chatEpisode}',
      812, 140, ${jsonb(row.tags ?? {})}, ${at}, ${text(keys[0].publicId)})`)
    if (row.dropPayload === true) return
    statements.push(`INSERT INTO tensorzero.chat_inference_data (id, input, output, inference_params, extra_body, dynamic_tools, dynamic_provider_tools, allowed_tools, tool_choice, parallel_tool_calls, created_at)
      VALUES ('${inferenceId}', ${jsonb(row.input)}, ${jsonb(row.output)}, ${jsonb(chatParams)}, '[]', ${jsonb(row.tools?.dynamic ?? [])}, '[]',
      ${jsonb(row.tools?.allowed)}, ${jsonb(row.tools?.choice)}, ${row.tools?.parallel ?? "NULL"}, ${at})`)
  }
  const json = (inferenceId: string, row: { functionName: string; variantName: string; input: unknown; output: unknown; schema: unknown; tags?: Record<string, string>; episodeId?: string }) => {
    const at = time(msOf(inferenceId))
    statements.push(`INSERT INTO tensorzero.json_inferences (id, function_name, variant_name, episode_id, processing_time_ms, ttft_ms, tags, created_at)
      VALUES ('${inferenceId}', ${text(row.functionName)}, ${text(row.variantName)}, '${row.episodeId ?? id(0)}', 951, NULL, ${jsonb(row.tags ?? {})}, ${at})`)
    statements.push(`INSERT INTO tensorzero.json_inference_data (id, input, output, output_schema, inference_params, extra_body, auxiliary_content, created_at)
      VALUES ('${inferenceId}', ${jsonb(row.input)}, ${jsonb(row.output)}, ${jsonb(row.schema)}, ${jsonb(jsonParams)}, '[]', '[]', ${at})`)
  }
  const modelInferences: Array<string> = []
  const model = (inferenceId: string, row: { functionName: string; variantName: string; output: unknown; cost: string | null; dropPayload?: boolean }) => {
    const modelId = uuidv7(msOf(inferenceId) + 5, ++counter)
    modelInferences.push(modelId)
    const at = time(msOf(modelId))
    statements.push(`INSERT INTO tensorzero.model_inferences (id, inference_id, input_tokens, output_tokens, response_time_ms, ttft_ms, model_name, model_provider_name,
        cached, finish_reason, created_at, cost, provider_cache_read_input_tokens, provider_cache_write_input_tokens, function_name, variant_name, provider_response_id, response_model_name, operation)
      VALUES ('${modelId}', '${inferenceId}', 57, 23, 790, 120, 'gpt-4o-mini-2024-07-18', 'openai', false, 'stop', ${at}, ${row.cost ?? "NULL"}, 12, NULL,
      ${text(row.functionName)}, ${text(row.variantName)}, 'chatcmpl-9x', 'gpt-4o-mini-2024-07-18', 'chat')`)
    if (row.dropPayload === true) return
    statements.push(`INSERT INTO tensorzero.model_inference_data (id, raw_request, raw_response, system, input_messages, output, created_at)
      VALUES ('${modelId}', ${text(JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "..." }] }))},
      ${text(JSON.stringify({ id: "chatcmpl-9x", choices: [{ message: { role: "assistant", content: "..." } }] }))}, 'You are a poet.',
      ${jsonb([userText("Write a haiku about artificial intelligence.")])}, ${jsonb(row.output)}, ${at})`)
  }

  const haiku = [{ type: "text", text: "Silent circuits hum\nthoughts unfold in rows of light\nmachines dream of spring" }]
  const text_ = id(10)
  chat(text_, { input: { system: { topic: "artificial intelligence" }, messages: [userText("Write a haiku about artificial intelligence.")] }, output: haiku })
  model(text_, { functionName: "write_haiku", variantName: "gpt_4o_mini", output: haiku, cost: "0.000123450" })

  const toolCall = id(20)
  const toolOutput = [
    { type: "thought", text: "The user wants the weather: call the tool." },
    { type: "tool_call", id: "call_8f2k", name: "get_temperature", arguments: { location: "Tokyo" }, raw_name: "get_temperature", raw_arguments: "{\"location\":\"Tokyo\"}" }
  ]
  chat(toolCall, {
    functionName: "weather_helper",
    variantName: "baseline",
    input: { messages: [userText("What is the temperature in Tokyo?")] },
    output: toolOutput,
    tools: { dynamic: [weatherTool], allowed: { tools: ["get_temperature"], choice: "dynamic_allowed_tools" }, choice: { specific: "get_temperature" }, parallel: false }
  })
  model(toolCall, { functionName: "weather_helper", variantName: "baseline", output: toolOutput, cost: null })

  const imageByUrl = id(30)
  chat(imageByUrl, {
    functionName: "describe_image",
    variantName: "gpt_4o",
    input: {
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "What kind of animal is in this image?" },
          {
            type: "file",
            source_url: "https://raw.githubusercontent.com/tensorzero/tensorzero/main/tensorzero-core/tests/e2e/providers/ferris.png",
            mime_type: "image/png",
            storage_path: s3Storage("observability/files/08bfa764c6dc25e658bab2b8039ddb494546c3bc5523296804efc4cab604df5d.png")
          }
        ]
      }]
    },
    output: [{ type: "text", text: "A crab: Ferris, the Rust mascot." }]
  })
  const imageStored = id(40)
  chat(imageStored, {
    functionName: "describe_image",
    variantName: "gpt_4o",
    input: {
      messages: [{
        role: "user",
        content: [
          { type: "text", text: "Describe this chart." },
          { type: "file", mime_type: "image/jpeg", storage_path: s3Storage("observability/files/5d1c0b0e3f0a4e19b1b2c9d0e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5.jpg") }
        ]
      }, assistantText("It shows revenue growing each quarter."), userText("Which quarter grew most?")]
    },
    output: [{ type: "text", text: "The fourth quarter." }]
  })

  const payloadDropped = id(50)
  chat(payloadDropped, { input: undefined, output: undefined, dropPayload: true })
  model(payloadDropped, { functionName: "write_haiku", variantName: "gpt_4o_mini", output: haiku, cost: "0.000100000", dropPayload: true })

  // one millisecond, several inferences
  const sameMillisecond = [0, 1, 2, 3, 4].map(() => uuidv7(start + 60, ++counter))
  sameMillisecond.forEach((inferenceId, index) =>
    chat(inferenceId, { input: { messages: [userText(`Haiku number ${index}`)] }, output: haiku, tags: { "user_id": `u${index}` } }))

  const badTags = id(70)
  chat(badTags, { input: { messages: [userText("hello")] }, output: haiku, tags: { attempt: 2 } })

  // an inference evaluation: the evaluated inference, the judge's inference and its score
  const evaluationRun = id(100)
  const datapoint = id(90)
  const evaluationTags = {
    "tensorzero::evaluation_run_id": evaluationRun,
    "tensorzero::evaluation_name": "haiku_eval",
    "tensorzero::datapoint_id": datapoint,
    "tensorzero::dataset_name": "haikus"
  }
  const evaluated = id(110)
  chat(evaluated, { input: { system: { topic: "rain" }, messages: [userText("Write a haiku about rain.")] }, output: haiku, tags: evaluationTags })
  model(evaluated, { functionName: "write_haiku", variantName: "gpt_4o_mini", output: haiku, cost: "0.000098000" })
  const judge = id(120)
  json(judge, {
    functionName: "tensorzero::llm_judge::haiku_eval::topic_starts_with_f",
    variantName: "gpt_4o_mini_judge",
    input: { system: { instructions: "Does the topic start with F?" }, messages: [userText(JSON.stringify({ input: "rain", generated_output: haiku }))] },
    output: { raw: "{\"score\":false}", parsed: { score: false } },
    schema: { type: "object", properties: { score: { type: "boolean" } }, required: ["score"] },
    tags: { ...evaluationTags, "tensorzero::evaluator_name": "topic_starts_with_f" }
  })
  const extraction = id(130)
  json(extraction, {
    functionName: "extract_entities",
    variantName: "gpt_4o_mini_json",
    input: { messages: [userText("Ada Lovelace lived in London.")] },
    output: { raw: "{\"person\":\"Ada Lovelace\",\"city\":\"London\"}", parsed: { person: "Ada Lovelace", city: "London" } },
    schema: extractionSchema,
    episodeId: chatEpisode
  })

  // feedback: each with its own created_at (insert time, microseconds)
  const feedbackIds: Array<string> = []
  const feedbackRow = (table: string, columns: string, values: string, offset: number, micros: number) => {
    const feedbackId = uuidv7(start + offset, ++counter)
    feedbackIds.push(feedbackId)
    statements.push(`INSERT INTO tensorzero.${table} (id, ${columns}, created_at) VALUES ('${feedbackId}', ${values}, ${time(start + offset, micros)})`)
    return feedbackId
  }
  const booleanOnInference = feedbackRow("boolean_metric_feedback", "target_id, metric_name, value, tags", `'${text_}', 'haiku_rating', true, '{}'`, 200, 17)
  const booleanOnEpisode = feedbackRow("boolean_metric_feedback", "target_id, metric_name, value, tags", `'${chatEpisode}', 'task_success', false, '{"source":"nightly"}'`, 210, 5)
  const floatOnEpisode = feedbackRow("float_metric_feedback", "target_id, metric_name, value, tags", `'${chatEpisode}', 'user_rating', 4.5, '{}'`, 220, 999)
  const evaluatorScore = feedbackRow("float_metric_feedback", "target_id, metric_name, value, tags",
    `'${evaluated}', 'tensorzero::evaluation_name::haiku_eval::evaluator_name::topic_starts_with_f', 0, ${
      jsonb({ ...evaluationTags, "tensorzero::evaluator_inference_id": judge })
    }`, 230, 0)
  const commentOnEpisode = feedbackRow("comment_feedback", "target_id, target_type, value, tags", `'${chatEpisode}', 'episode', 'The user gave up after two tries.', '{}'`, 240, 1)
  feedbackRow("comment_feedback", "target_id, target_type, value, tags", `'${toolCall}', 'inference', 'Should have asked for the unit.', '{}'`, 250, 2)
  const demonstration = feedbackRow("demonstration_feedback", "inference_id, value, tags",
    `'${text_}', ${jsonb([{ type: "text", text: "Circuits softly hum\nlearning from the words we give\na new mind takes shape" }])}, '{}'`, 260, 3)
  // written within one millisecond, microseconds apart, ids not in time order
  const sameMillisecondFeedback = [900, 100, 500].map((micros) =>
    feedbackRow("boolean_metric_feedback", "target_id, metric_name, value, tags", `'${sameMillisecond[0]}', 'haiku_rating', ${micros > 400}, '{}'`, 270, micros))

  // datapoints: live, stale, edited (old version staled + new id)
  const datapointIds: Array<string> = []
  const chatDatapoint = (datapointId: string, row: { name?: string; input: unknown; output: unknown; staledAt?: number; updatedAt?: number; isCustom?: boolean; source?: string }) => {
    datapointIds.push(datapointId)
    const created = msOf(datapointId)
    statements.push(`INSERT INTO tensorzero.chat_datapoints (id, dataset_name, function_name, episode_id, input, output, dynamic_tools, tool_choice, parallel_tool_calls,
        tags, is_custom, source_inference_id, name, staled_at, created_at, updated_at)
      VALUES ('${datapointId}', 'haikus', 'write_haiku', ${text(row.source === undefined ? null : chatEpisode)}, ${jsonb(row.input)}, ${jsonb(row.output)},
      '[]', NULL, NULL, '{"tensorzero::datapoint_source":"inference"}', ${row.isCustom ?? false}, ${text(row.source ?? null)}, ${text(row.name ?? null)},
      ${time(row.staledAt ?? null, 250)}, ${time(created)}, ${time(row.updatedAt ?? created, 250)})`)
  }
  chatDatapoint(datapoint, { name: "rain", input: { system: { topic: "rain" }, messages: [userText("Write a haiku about rain.")] }, output: haiku, source: text_ })
  const stale = id(300)
  chatDatapoint(stale, { input: { messages: [userText("Write a haiku about snow.")] }, output: haiku, staledAt: start + 400, updatedAt: start + 400 })
  const editedOld = id(310)
  const editedNew = id(500)
  chatDatapoint(editedOld, { input: { messages: [userText("Write a haiku about fog.")] }, output: haiku, staledAt: start + 500, updatedAt: start + 500 })
  chatDatapoint(editedNew, {
    input: { messages: [userText("Write a haiku about morning fog.")] },
    output: [{ type: "text", text: "Morning fog lingers" }],
    isCustom: true
  })
  const jsonDatapoint = id(320)
  datapointIds.push(jsonDatapoint)
  statements.push(`INSERT INTO tensorzero.json_datapoints (id, dataset_name, function_name, episode_id, input, output, output_schema, tags, is_custom, source_inference_id, name, created_at, updated_at)
    VALUES ('${jsonDatapoint}', 'entities', 'extract_entities', NULL, ${jsonb({ messages: [userText("Grace Hopper worked in Arlington.")] })},
    ${jsonb({ raw: "{\"person\":\"Grace Hopper\",\"city\":\"Arlington\"}", parsed: { person: "Grace Hopper", city: "Arlington" } })}, ${jsonb(extractionSchema)},
    '{}', true, NULL, NULL, ${time(msOf(jsonDatapoint))}, ${time(msOf(jsonDatapoint), 10)})`)

  statements.push(`INSERT INTO tensorzero.inference_evaluation_runs (run_id, evaluation_name, function_name, function_type, dataset_name, variant_names, metrics, source, created_at, updated_at)
    VALUES ('${evaluationRun}', 'haiku_eval', 'write_haiku', 'chat', 'haikus', '["gpt_4o_mini"]',
    ${jsonb([{ name: "tensorzero::evaluation_name::haiku_eval::evaluator_name::topic_starts_with_f", evaluator_name: "topic_starts_with_f", value_type: "boolean", optimize: "max" }])},
    'dataset_name', ${time(msOf(evaluationRun))}, ${time(msOf(evaluationRun) + 900, 7)})`)

  // workflow evaluations: a live run with two episodes, a staled run with one
  const liveRun = id(600)
  const staledRun = id(610)
  const runTags = { "tensorzero::git_commit_hash": "3f9c2a1", "experiment": "prompt-v2" }
  statements.push(`INSERT INTO tensorzero.workflow_evaluation_runs (run_id, project_name, run_display_name, variant_pins, tags, staled_at, created_at, updated_at) VALUES
    ('${liveRun}', 'beerqa', 'prompt v2', ${jsonb({ write_haiku: "gpt_4o_mini", extract_entities: "gpt_4o_mini_json" })}, ${jsonb(runTags)}, NULL, ${time(msOf(liveRun))}, ${time(msOf(liveRun), 3)}),
    ('${staledRun}', 'beerqa', NULL, '{}', '{}', ${time(start + 700)}, ${time(msOf(staledRun))}, ${time(start + 700)})`)
  const episodes = [id(620), id(630), id(640)]
  const episodeRun = [liveRun, liveRun, staledRun]
  statements.push(`INSERT INTO tensorzero.workflow_evaluation_run_episodes (episode_id, run_id, variant_pins, task_name, tags, staled_at, created_at, updated_at) VALUES ${
    episodes.map((episodeId, index) =>
      `('${episodeId}', '${episodeRun[index]}', ${jsonb(index < 2 ? { write_haiku: "gpt_4o_mini", extract_entities: "gpt_4o_mini_json" } : {})},
      ${text(index === 1 ? null : `task-${index}`)}, ${jsonb({ ...(index < 2 ? runTags : {}), "tensorzero::workflow_evaluation_run_id": episodeRun[index] })},
      ${time(index === 2 ? start + 700 : null)}, ${time(msOf(episodeId))}, ${time(msOf(episodeId), 11)})`
    ).join(", ")
  }`)
  const workflowInference = id(625)
  chat(workflowInference, { episodeId: episodes[0], input: { messages: [userText("Who brewed the first IPA?")] }, output: haiku, tags: { "tensorzero::workflow_evaluation_run_id": liveRun } })

  // batches: a completed one (a pending row, then a completed row with its payload), a pending one
  const batchRequest = (batchId: string, offset: number, status: string, payload: boolean) => {
    const requestId = id(offset)
    statements.push(`INSERT INTO tensorzero.batch_requests (id, batch_id, function_name, variant_name, model_name, model_provider_name, batch_params, status, created_at)
      VALUES ('${requestId}', '${batchId}', 'write_haiku', 'gpt_4o_mini_batch', 'gpt-4o-mini', 'openai', ${jsonb({ file_id: `file-${batchId.slice(-6)}`, batch_id: `batch_${batchId.slice(-6)}` })},
      ${text(status)}, ${time(msOf(requestId))})`)
    if (payload) {
      statements.push(`INSERT INTO tensorzero.batch_request_data (id, raw_request, raw_response, errors, created_at)
        VALUES ('${requestId}', '{"input_file_id":"file-abc","endpoint":"/v1/chat/completions"}', '{"id":"batch_abc","status":"completed"}', '[]', ${time(msOf(requestId))})`)
    }
    return requestId
  }
  const batchInference = (batchId: string, offset: number) => {
    const inferenceId = id(offset)
    const at = time(msOf(inferenceId))
    statements.push(`INSERT INTO tensorzero.batch_model_inferences (inference_id, batch_id, function_name, variant_name, episode_id, model_name, model_provider_name, tags, created_at)
      VALUES ('${inferenceId}', '${batchId}', 'write_haiku', 'gpt_4o_mini_batch', '${id(offset)}', 'gpt-4o-mini', 'openai', '{"batch":"nightly"}', ${at})`)
    statements.push(`INSERT INTO tensorzero.batch_model_inference_data (inference_id, input, input_messages, system, inference_params, raw_request, output_schema,
        dynamic_tools, dynamic_provider_tools, allowed_tools, tool_choice, parallel_tool_calls, created_at)
      VALUES ('${inferenceId}', ${jsonb({ system: { topic: "tides" }, messages: [userText("Write a haiku about tides.")] })},
      ${jsonb([userText("Write a haiku about tides.")])}, 'You are a poet.', ${jsonb(chatParams)}, '{"custom_id":"x"}', NULL, ${jsonb([weatherTool])}, '[]', NULL, '"auto"', true, ${at})`)
    return inferenceId
  }
  const completedBatch = id(800)
  batchRequest(completedBatch, 800, "pending", false)
  const completedInferences = [batchInference(completedBatch, 801), batchInference(completedBatch, 802)]
  batchRequest(completedBatch, 1200, "completed", true)
  const pendingBatch = id(900)
  batchRequest(pendingBatch, 900, "pending", false)
  const pendingInferences = [batchInference(pendingBatch, 901)]

  // DICL examples (a real[] is cast to pgvector's vector on assignment); one input is not JSON (TensorZero always writes JSON there)
  const embedding = [0.125, -0.5, 0.75, 1]
  const diclExample = (offset: number, input: string, output: string) => {
    const exampleId = id(offset)
    statements.push(`INSERT INTO tensorzero.dicl_examples (id, function_name, variant_name, namespace, input, output, embedding, created_at)
      VALUES ('${exampleId}', 'write_haiku', 'dicl', '', ${text(input)}, ${text(output)}, ARRAY[${embedding.join(",")}]::real[], ${time(msOf(exampleId), 42)})`)
    return exampleId
  }
  const diclExamples = [
    diclExample(1000, JSON.stringify({ messages: [userText("Write a haiku about rain.")] }), JSON.stringify(haiku)),
    diclExample(1010, JSON.stringify({ system: { topic: "sea" }, messages: [userText("Write a haiku about the sea.")] }), JSON.stringify(haiku))
  ]
  const garbageInput = diclExample(1020, "{messages: [unterminated", JSON.stringify(haiku))

  statements.push(`INSERT INTO tensorzero.variant_by_episode (function_name, episode_id, variant_name) VALUES ('write_haiku', '${chatEpisode}', 'gpt_4o_mini')`)

  await runStatements(url, statements)

  return {
    keys,
    ids: {
      api_keys: keys.map((key) => key.publicId),
      datapoints: datapointIds,
      inferences: [text_, toolCall, imageByUrl, imageStored, payloadDropped, ...sameMillisecond, badTags, evaluated, judge, extraction, workflowInference],
      model_inferences: modelInferences,
      feedback: feedbackIds,
      evaluation_runs: [evaluationRun],
      workflow_evaluation_runs: [liveRun, staledRun],
      workflow_evaluation_episodes: episodes,
      batches: [completedBatch, pendingBatch],
      dicl_examples: [...diclExamples, garbageInput]
    },
    unreadable: [badTags],
    inference: { text: text_, toolCall, imageByUrl, imageStored, payloadDropped, evaluated, judge, extraction, sameMillisecond, badTags },
    episode: { chat: chatEpisode, workflow: episodes },
    feedback: { booleanOnInference, booleanOnEpisode, floatOnEpisode, evaluatorScore, commentOnEpisode, demonstration, sameMillisecond: sameMillisecondFeedback },
    datapoint: { chat: datapoint, json: jsonDatapoint, stale, editedOld, editedNew },
    evaluationRun,
    workflowRun: { live: liveRun, staled: staledRun },
    batch: { completed: completedBatch, completedInferences, pending: pendingBatch, pendingInferences },
    dicl: { examples: diclExamples, garbageInput, embedding },
    start
  }
}

/**
 * `n` more chat inferences (with their payloads and one model inference each), ten per
 * millisecond from `start`, in a few INSERT ... SELECT statements.
 */
export const seedManyInferences = async (url: string, n: number, start: number = Date.UTC(2026, 2, 20)): Promise<void> => {
  const idOf = (salt: string) => `(lpad(to_hex(${start}::int8 + g / 10), 12, '0') || '7${salt}' || '8' || lpad(to_hex(g), 15, '0'))::uuid`
  const at = `(timestamptz 'epoch' + interval '1 millisecond' * (${start}::int8 + g / 10))`
  const series = `FROM generate_series(0, ${n - 1}) AS g`
  await runStatements(url, [
      `INSERT INTO tensorzero.chat_inferences (id, function_name, variant_name, episode_id, processing_time_ms, ttft_ms, tags, created_at)
        SELECT ${idOf("000")}, 'write_haiku', 'gpt_4o_mini', ${idOf("fff")}, 800, 120, jsonb_build_object('user_id', 'u' || (g % 1000)), ${at} ${series}`,
      `INSERT INTO tensorzero.chat_inference_data (id, input, output, inference_params, created_at)
        SELECT ${idOf("000")}, jsonb_build_object('messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content',
          jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'Write haiku number ' || g))))),
        '[{"type":"text","text":"Silent circuits hum"}]', '{"chat_completion":{}}', ${at} ${series}`,
      `INSERT INTO tensorzero.model_inferences (id, inference_id, input_tokens, output_tokens, response_time_ms, model_name, model_provider_name, created_at, cost, function_name, variant_name)
        SELECT ${idOf("001")}, ${idOf("000")}, 40, 17, 700, 'gpt-4o-mini', 'openai', ${at}, 0.0000321, 'write_haiku', 'gpt_4o_mini' ${series}`,
      `INSERT INTO tensorzero.model_inference_data (id, raw_request, raw_response, system, input_messages, output, created_at)
        SELECT ${idOf("001")}, '{}', '{}', NULL, '[]', '[{"type":"text","text":"Silent circuits hum"}]', ${at} ${series}`
  ])
}
