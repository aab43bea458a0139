/**
 * A TensorZero deployment's stored data, as `gateway import-tensorzero` reads it: one stream of
 * rows per kind of record, each row in a neutral shape that both of TensorZero's databases
 * (its Postgres of 2026, layers/tensorzeroImport/postgresSource.ts, and its ClickHouse,
 * layers/tensorzeroImport/clickhouseSource.ts) are read into. The rows carry TensorZero's values
 * as they are (its `tensorzero::` names, its JSON shapes): mapping them to this gateway's
 * records is src/tensorzeroImport/map.ts's job, and a value it cannot map skips that row only.
 *
 * JSON payloads may come parsed (Postgres `jsonb`) or as their JSON text (ClickHouse `String`,
 * Postgres `text`): the mapper parses a string where it expects JSON.
 */
import type * as Effect from "effect/Effect"
import * as Data from "effect/Data"

/** The streams, in the order they are imported: what later rows point at comes first. */
export const streamNames = [
  "api_keys",
  "datapoints",
  "inferences",
  "model_inferences",
  "feedback",
  "evaluation_runs",
  "workflow_evaluation_runs",
  "workflow_evaluation_episodes",
  "batches",
  "dicl_examples"
] as const

export type StreamName = typeof streamNames[number]

/**
 * Where a stream was read up to: the ordering time (epoch ms) and id of the last row read.
 * Every stream is read in ascending `(at, id)` order: `at` is the row's creation time for
 * records that never change, and its last change (`updated_at`) for those that do (keys,
 * datapoints, workflow evaluation runs and episodes), so that a later run picks up the changes.
 * An empty id (where a later run restarts, a little before a saved position) comes before every
 * id: the page after it starts with the first row at `at`.
 */
export interface Position {
  readonly at: number
  readonly id: string
}

export type Json = unknown

/** a key TensorZero issued (`sk-t0-<publicId>-<secret>`); only the SHA-256 of the secret is stored */
export interface TzApiKey {
  /** 12 characters, mixed case, kept verbatim */
  readonly publicId: string
  /** lowercase hex SHA-256 of the secret part of the key */
  readonly hash: string
  readonly description?: string | null
  readonly organization?: string | null
  readonly workspace?: string | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly expiresAt?: number | null
  readonly disabledAt?: number | null
}

/**
 * TensorZero's tool parameters, as its older single `tool_params` column held them
 * (`{tools_available, tool_choice, parallel_tool_calls}`); a source that stores them in separate
 * columns (Postgres 2026: `dynamic_tools`, `dynamic_provider_tools`, `allowed_tools`,
 * `tool_choice`, `parallel_tool_calls`) gives `{tools_available: dynamic_tools,
 * provider_tools: dynamic_provider_tools, allowed_tools, tool_choice, parallel_tool_calls}`.
 */
export type TzToolParams = Json

export interface TzInference {
  readonly id: string
  readonly kind: "chat" | "json"
  readonly functionName: string
  readonly variantName: string
  readonly episodeId: string
  /** undefined when TensorZero's retention dropped the payload but kept the row */
  readonly input: Json
  readonly output: Json
  readonly toolParams?: TzToolParams
  readonly inferenceParams?: Json
  readonly outputSchema?: Json
  readonly extraBody?: Json
  readonly processingTimeMs?: number | null
  readonly ttftMs?: number | null
  readonly tags: Readonly<Record<string, string>>
  /** the public id of the key that made it (TensorZero 2026 with authentication on) */
  readonly apiKeyPublicId?: string | null
  /** epoch ms: the time of the UUIDv7 id */
  readonly timestamp: number
}

export interface TzModelInference {
  readonly id: string
  readonly inferenceId: string
  readonly rawRequest?: string | null
  readonly rawResponse?: string | null
  readonly system?: string | null
  readonly inputMessages?: Json
  readonly output?: Json
  readonly inputTokens?: number | null
  readonly outputTokens?: number | null
  readonly cacheReadInputTokens?: number | null
  readonly cacheWriteInputTokens?: number | null
  /** dollars; null when TensorZero tracked no cost */
  readonly cost?: number | null
  readonly responseTimeMs?: number | null
  readonly ttftMs?: number | null
  readonly modelName: string
  readonly modelProviderName: string
  readonly cached: boolean
  readonly finishReason?: string | null
  readonly timestamp: number
}

export interface TzFeedback {
  readonly id: string
  readonly kind: "boolean" | "float" | "comment" | "demonstration"
  /** the metric; `comment` and `demonstration` for those kinds */
  readonly metricName: string
  readonly targetId: string
  /**
   * what `targetId` names. Comments say it; for boolean and float feedback the source looks the
   * id up: an inference when one has that id, an episode otherwise. Demonstrations: an inference.
   */
  readonly targetType: "inference" | "episode"
  /** boolean, number, text, or a demonstration's output (JSON or its text) */
  readonly value: Json
  readonly tags: Readonly<Record<string, string>>
  readonly timestamp: number
}

export interface TzDatapoint {
  readonly id: string
  readonly kind: "chat" | "json"
  readonly datasetName: string
  readonly functionName: string
  readonly episodeId?: string | null
  readonly input: Json
  readonly output?: Json
  readonly toolParams?: TzToolParams
  readonly outputSchema?: Json
  readonly tags: Readonly<Record<string, string>>
  readonly isCustom: boolean
  readonly sourceInferenceId?: string | null
  readonly name?: string | null
  readonly staledAt?: number | null
  readonly updatedAt: number
}

/** `inference_evaluation_runs` (TensorZero 2026): a run's metadata; its results are tagged inferences and feedback */
export interface TzEvaluationRun {
  readonly runId: string
  readonly evaluationName: string
  readonly functionName: string
  readonly functionType: "chat" | "json"
  readonly datasetName: string
  readonly variantNames: ReadonlyArray<string>
  readonly metrics?: Json
  readonly source?: string | null
  readonly createdAt: number
  readonly updatedAt: number
}

export interface TzWorkflowRun {
  readonly runId: string
  readonly projectName?: string | null
  readonly displayName?: string | null
  /** function name -> variant name */
  readonly variantPins: Readonly<Record<string, string>>
  readonly tags: Readonly<Record<string, string>>
  readonly staledAt?: number | null
  readonly timestamp: number
  readonly updatedAt: number
}

export interface TzWorkflowEpisode {
  readonly episodeId: string
  readonly runId: string
  readonly taskName?: string | null
  readonly variantPins?: Readonly<Record<string, string>>
  readonly tags: Readonly<Record<string, string>>
  readonly staledAt?: number | null
  readonly timestamp: number
  readonly updatedAt: number
}

export interface TzBatchInference {
  readonly inferenceId: string
  readonly episodeId: string
  readonly functionName: string
  readonly variantName: string
  readonly input: Json
  readonly inputMessages?: Json
  readonly system?: string | null
  readonly toolParams?: TzToolParams
  readonly inferenceParams?: Json
  readonly outputSchema?: Json
  readonly rawRequest?: string | null
  readonly modelName: string
  readonly modelProviderName: string
  readonly tags: Readonly<Record<string, string>>
  readonly timestamp: number
}

/** a batch: its latest request row (TensorZero appends one per status change) and its inferences */
export interface TzBatch {
  readonly batchId: string
  /** the id of the latest request row */
  readonly requestId: string
  readonly functionName: string
  readonly variantName: string
  readonly modelName: string
  readonly modelProviderName: string
  readonly batchParams?: Json
  readonly status: "pending" | "completed" | "failed"
  readonly rawRequest?: string | null
  readonly rawResponse?: string | null
  readonly errors?: Json
  /** epoch ms of the first request row (the submission) */
  readonly timestamp: number
  /** epoch ms of the latest request row */
  readonly updatedAt: number
  readonly inferences: ReadonlyArray<TzBatchInference>
}

export interface TzDiclExample {
  readonly id: string
  readonly functionName: string
  readonly variantName: string
  readonly namespace?: string | null
  /** TensorZero's stored input, as JSON text (or parsed) */
  readonly input: Json
  /** the output as TensorZero serialized it: a chat output's blocks or a json output, as JSON text */
  readonly output: Json
  readonly embedding: ReadonlyArray<number>
  readonly timestamp: number
}

export interface StreamRows {
  readonly api_keys: TzApiKey
  readonly datapoints: TzDatapoint
  readonly inferences: TzInference
  readonly model_inferences: TzModelInference
  readonly feedback: TzFeedback
  readonly evaluation_runs: TzEvaluationRun
  readonly workflow_evaluation_runs: TzWorkflowRun
  readonly workflow_evaluation_episodes: TzWorkflowEpisode
  readonly batches: TzBatch
  readonly dicl_examples: TzDiclExample
}

/**
 * A row the source could read but not put into the neutral shape (a column holding what its
 * type does not allow): skipped and reported like a row the mapper refuses.
 */
export interface UnreadableRow {
  readonly unreadable: true
  readonly id: string
  readonly reason: string
}

/** One page of a stream: its rows in `(at, id)` order, and the position of its last row. */
export interface SourcePage<S extends StreamName> {
  readonly rows: ReadonlyArray<StreamRows[S] | UnreadableRow>
  /** the position after this page's last row; undefined when the page is empty */
  readonly last: Position | undefined
}

export class SourceError extends Data.TaggedError("SourceError")<{ readonly message: string }> {}

/** A TensorZero database opened for reading. */
export interface TensorZeroSource {
  /** what was found, for the first line of the output: "TensorZero Postgres (2026 layout)" */
  readonly description: string
  /** the streams this source holds (a ClickHouse of an old release holds no keys, say) */
  readonly streams: ReadonlyArray<StreamName>
  /** roughly how many rows a stream holds after `after` (for the ETA); undefined when unknown */
  readonly estimate: (stream: StreamName, after: Position | undefined) => Effect.Effect<number | undefined, SourceError>
  /** up to `limit` rows of `stream` after `after` (from the start when undefined), in `(at, id)` order */
  readonly page: <S extends StreamName>(stream: S, after: Position | undefined, limit: number) => Effect.Effect<SourcePage<S>, SourceError>
}
