/**
 * TensorZero's records (src/tensorzeroImport/source.ts) as this gateway's: the same ids, the
 * `tensorzero::` names renamed (names.ts), inputs and outputs in the shapes this gateway stores
 * and reads back. Pure. A record that cannot be mapped is a `Skip` with the reason (a short
 * phrase the summary counts by) and the detail (what was wrong, for the report).
 */
import { Input } from "../api/inference.ts"
import type { StoredFeedback, StoredInference, StoredModelInference } from "../analytics/records.ts"
import { publicIdPattern } from "../auth/apiKey.ts"
import type { ImportedApiKey } from "../auth/store.ts"
import type { StoredBatch, StoredBatchInference } from "../batch/store.ts"
import type { NewDatapoint } from "../datasets/store.ts"
import { searchTextOf } from "../datasets/search.ts"
import type { DiclExample } from "../dicl/store.ts"
import { formatFieldIssues, makeLenientDecoder } from "../decode.ts"
import { isUuid, uuidv7Timestamp } from "../ids.ts"
import type { ChatOutputBlock, JsonOutput } from "../inference/output.ts"
import type { FinishReason, OutputBlock } from "../inference/types.ts"
import { apiKeyTag } from "../api/tags.ts"
import type { WorkflowEpisodeRecord, WorkflowRunRecord } from "../workflowEvaluations/store.ts"
import { gatewayName, gatewayTags } from "./names.ts"
import type { StreamName, StreamRows } from "./source.ts"
import type {
  TzApiKey,
  TzBatch,
  TzDatapoint,
  TzDiclExample,
  TzEvaluationRun,
  TzFeedback,
  TzInference,
  TzModelInference,
  TzWorkflowEpisode,
  TzWorkflowRun
} from "./source.ts"

export interface Skip {
  /** what kind of problem: the summary counts skips by it */
  readonly reason: string
  /** what exactly was wrong */
  readonly detail?: string | undefined
}

export type Mapped<T> = { readonly record: T } | { readonly skip: Skip }

const skip = (reason: string, detail?: string): { readonly skip: Skip } => ({ skip: { reason, detail } })

/** thrown inside a mapper to skip the record; caught by `mapped` */
class Unmappable extends Error {
  readonly skip: Skip
  constructor(skip: Skip) {
    super(skip.reason)
    this.skip = skip
  }
}

const refuse = (reason: string, detail?: string): never => {
  throw new Unmappable({ reason, detail })
}

/** `map(row)`, with a refusal inside it (or any mistake of the data) as a skip */
const mapped = <R, T>(row: R, map: (row: R) => T): Mapped<T> => {
  try {
    return { record: map(row) }
  } catch (error) {
    if (error instanceof Unmappable) return { skip: error.skip }
    return skip("unexpected value", error instanceof Error ? error.message : String(error))
  }
}

/** a JSON payload, parsed when it came as its text */
const json = (value: unknown, field: string): unknown => {
  if (typeof value !== "string") return value
  try {
    return JSON.parse(value)
  } catch {
    return refuse(`${field} is not JSON`, value.length > 120 ? `${value.slice(0, 120)}...` : value)
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const uuid = (value: string | null | undefined, field: string): string => {
  if (typeof value !== "string" || !isUuid(value)) return refuse(`${field} is not a UUID`, String(value))
  return value.toLowerCase()
}

const optionalNumber = (value: number | null | undefined): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined

// ---- inputs ----

const decodeInput = makeLenientDecoder(Input)

/** a file block of TensorZero's stored input (of any of its releases) as this gateway stores one */
const fileBlock = (block: Record<string, unknown>): unknown => {
  if (block.file_type !== undefined) return block
  const file = isObject(block.file) ? block.file : {}
  const mimeType = block.mime_type ?? file.mime_type
  const sourceUrl = block.source_url ?? file.url ?? null
  if (isObject(block.storage_path)) {
    return { type: "file", file_type: "object_storage", mime_type: mimeType, storage_path: block.storage_path, source_url: sourceUrl, ...(block.detail !== undefined && { detail: block.detail }) }
  }
  if (typeof block.url === "string" || typeof sourceUrl === "string") {
    return { type: "file", file_type: "url", url: block.url ?? sourceUrl, ...(typeof mimeType === "string" && { mime_type: mimeType }) }
  }
  if (typeof block.data === "string" || typeof file.data === "string") {
    return { type: "file", file_type: "base64", data: block.data ?? file.data, mime_type: mimeType }
  }
  return block
}

/** one block of a stored input message: TensorZero's older `value` of text blocks, and its file shapes */
const inputBlock = (block: unknown): unknown => {
  if (!isObject(block)) return block
  if (block.type === "text" && block.text === undefined && block.arguments === undefined && "value" in block) {
    const { value, ...rest } = block
    return typeof value === "string" ? { ...rest, text: value } : { ...rest, arguments: value }
  }
  if (block.type === "file") return fileBlock(block)
  // TensorZero's first releases: images alone, `{type: "image", image: {url, mime_type}, storage_path}`
  if (block.type === "image" && isObject(block.image)) {
    const { image, ...rest } = block
    return fileBlock({ ...rest, type: "file", file: image })
  }
  return block
}

/** TensorZero's `StoredInput` as this gateway's input (checked: a datapoint's input must run) */
export const gatewayInput = (value: unknown, field = "input"): Input => {
  const parsed = json(value, field)
  if (!isObject(parsed)) return refuse(`${field} is not an object`)
  const messages = Array.isArray(parsed.messages)
    ? parsed.messages.map((message) =>
      isObject(message) && Array.isArray(message.content) ? { ...message, content: message.content.map(inputBlock) } : message
    )
    : parsed.messages
  const system = parsed.system === null ? undefined : parsed.system
  const decoded = decodeInput({ ...(system !== undefined && { system }), ...(messages !== undefined && { messages }) })
  if (!decoded.ok) return refuse(`${field} is not a valid input`, formatFieldIssues(decoded.issues, [field]))
  return decoded.value
}

// ---- outputs ----

const argumentsText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value ?? {}))

/** a chat output block as an inference holds it */
const chatBlock = (block: unknown, field: string): ChatOutputBlock => {
  if (!isObject(block)) return refuse(`${field} holds a block that is not an object`)
  switch (block.type) {
    case "text":
      return { type: "text", text: String(block.text ?? "") }
    case "tool_call": {
      const rawName = typeof block.raw_name === "string" ? block.raw_name : String(block.name ?? "")
      const rawArguments = typeof block.raw_arguments === "string" ? block.raw_arguments : argumentsText(block.arguments)
      return {
        type: "tool_call",
        id: String(block.id ?? ""),
        name: typeof block.name === "string" ? block.name : null,
        arguments: block.arguments === undefined ? null : block.arguments,
        raw_name: rawName,
        raw_arguments: rawArguments
      }
    }
    case "thought":
      return {
        type: "thought",
        text: String(block.text ?? ""),
        ...(typeof block.signature === "string" && { signature: block.signature }),
        ...(typeof block.provider_type === "string" && { provider_type: block.provider_type })
      }
    case "unknown":
      return { type: "unknown", data: block.data, model_provider_name: String(block.model_provider_name ?? "") }
    default:
      return refuse(`${field} holds a block of unknown type`, String(block.type))
  }
}

const chatOutput = (value: unknown, field: string): ReadonlyArray<ChatOutputBlock> => {
  const parsed = json(value, field)
  if (!Array.isArray(parsed)) return refuse(`${field} is not a list of blocks`)
  return parsed.map((block) => chatBlock(block, field))
}

/** TensorZero's `{raw, parsed}` (its `raw` may be null when nothing parsed) */
const jsonOutput = (value: unknown, field: string): JsonOutput => {
  const parsed = json(value, field)
  if (!isObject(parsed)) return refuse(`${field} is not a json output`)
  const raw = typeof parsed.raw === "string" ? parsed.raw : parsed.parsed === undefined || parsed.parsed === null ? "" : JSON.stringify(parsed.parsed)
  return { raw, parsed: parsed.parsed ?? null }
}

/** a model call's output blocks (tool calls as the provider named them) */
const modelOutput = (value: unknown): ReadonlyArray<OutputBlock> => {
  if (value === undefined || value === null) return []
  const parsed = json(value, "output")
  if (!Array.isArray(parsed)) return refuse("output is not a list of blocks")
  return parsed.map((entry): OutputBlock => {
    const block = chatBlock(entry, "output")
    return block.type === "tool_call" ? { type: "tool_call", id: block.id, raw_name: block.raw_name, raw_arguments: block.raw_arguments } : block
  })
}

// ---- tools ----

/** TensorZero's tool parameters as this gateway stores an inference's (`toolParamsOf`) */
const toolParams = (value: unknown): unknown => {
  if (value === undefined || value === null || value === "") return undefined
  const parsed = json(value, "tool_params")
  if (!isObject(parsed)) return refuse("tool_params is not an object")
  const tools = Array.isArray(parsed.tools_available) ? parsed.tools_available : []
  const choice = parsed.tool_choice ?? "auto"
  return {
    tools_available: tools.map((tool) => {
      const fields = isObject(tool) && isObject(tool.function) ? tool.function : isObject(tool) ? tool : {}
      return { name: fields.name, description: fields.description ?? "", parameters: fields.parameters ?? {}, strict: fields.strict ?? false }
    }),
    tool_choice: typeof choice === "string" ? choice : choice,
    parallel_tool_calls: parsed.parallel_tool_calls ?? null,
    allowed_tools: Array.isArray(parsed.allowed_tools) ? parsed.allowed_tools : isObject(parsed.allowed_tools) && Array.isArray(parsed.allowed_tools.tools) ? parsed.allowed_tools.tools : null
  }
}

// ---- records ----

export const mapInference = (row: TzInference, workspace: string): Mapped<StoredInference> =>
  mapped(row, (row) => {
    const id = uuid(row.id, "id")
    if (row.input === undefined || row.input === null) return refuse("payload dropped by TensorZero's retention")
    const tags = gatewayTags(row.tags)
    if (typeof row.apiKeyPublicId === "string" && row.apiKeyPublicId.trim() !== "") tags[apiKeyTag] = row.apiKeyPublicId.trim()
    return {
      id,
      workspace,
      functionName: gatewayName(row.functionName),
      functionType: row.kind,
      variantName: row.variantName,
      episodeId: uuid(row.episodeId, "episode_id"),
      input: gatewayInput(row.input),
      output: row.kind === "chat" ? chatOutput(row.output, "output") : jsonOutput(row.output, "output"),
      toolParams: row.kind === "chat" ? toolParams(row.toolParams) : undefined,
      outputSchema: row.kind === "json" ? json(row.outputSchema, "output_schema") ?? {} : undefined,
      inferenceParams: json(row.inferenceParams, "inference_params") ?? {},
      processingTimeMs: optionalNumber(row.processingTimeMs) ?? 0,
      ttftMs: optionalNumber(row.ttftMs),
      tags,
      timestamp: uuidv7Timestamp(id)
    }
  })

const finishReasons: ReadonlySet<string> = new Set<FinishReason>(["stop", "stop_sequence", "length", "tool_call", "content_filter", "unknown"])

export const mapModelInference = (row: TzModelInference, workspace: string): Mapped<StoredModelInference> =>
  mapped(row, (row) => {
    const id = uuid(row.id, "id")
    const finish = typeof row.finishReason === "string" ? row.finishReason.toLowerCase() : undefined
    return {
      id,
      workspace,
      inferenceId: uuid(row.inferenceId, "inference_id"),
      modelName: gatewayName(row.modelName),
      modelProviderName: row.modelProviderName,
      rawRequest: row.rawRequest ?? "",
      rawResponse: row.rawResponse ?? "",
      system: row.system ?? undefined,
      inputMessages: json(row.inputMessages, "input_messages") ?? [],
      output: modelOutput(row.output),
      inputTokens: optionalNumber(row.inputTokens) ?? 0,
      outputTokens: optionalNumber(row.outputTokens) ?? 0,
      cachedInputTokens: optionalNumber(row.cacheReadInputTokens),
      cost: optionalNumber(row.cost),
      responseTimeMs: optionalNumber(row.responseTimeMs) ?? 0,
      ttftMs: optionalNumber(row.ttftMs),
      finishReason: finish !== undefined && finishReasons.has(finish) ? finish as FinishReason : undefined,
      cached: row.cached,
      timestamp: uuidv7Timestamp(id)
    }
  })

const feedbackValue = (row: TzFeedback): unknown => {
  switch (row.kind) {
    case "boolean":
      if (typeof row.value === "boolean") return row.value
      if (row.value === 0 || row.value === 1) return row.value === 1
      return refuse("boolean feedback whose value is not a boolean", String(row.value))
    case "float": {
      const value = typeof row.value === "string" ? Number(row.value) : row.value
      if (typeof value !== "number" || !Number.isFinite(value)) return refuse("float feedback whose value is not a number", String(row.value))
      return value
    }
    case "comment":
      if (typeof row.value !== "string") return refuse("comment whose value is not text")
      return row.value
    case "demonstration":
      return json(row.value, "value")
  }
}

export const mapFeedback = (row: TzFeedback, workspace: string): Mapped<StoredFeedback> =>
  mapped(row, (row) => {
    const id = uuid(row.id, "id")
    return {
      id,
      workspace,
      kind: row.kind,
      metricName: gatewayName(row.metricName),
      targetType: row.kind === "demonstration" ? "inference" : row.targetType,
      targetId: uuid(row.targetId, "target_id"),
      value: feedbackValue(row),
      tags: gatewayTags(row.tags),
      timestamp: uuidv7Timestamp(id)
    }
  })

export const mapDatapoint = (row: TzDatapoint, workspace: string): Mapped<NewDatapoint> =>
  mapped(row, (row) => {
    const id = uuid(row.id, "id")
    const input = gatewayInput(row.input)
    const output = row.output === undefined || row.output === null
      ? undefined
      : row.kind === "chat"
      ? chatOutput(row.output, "output")
      : jsonOutput(row.output, "output").parsed
    const tools = row.kind === "chat" ? toolParams(row.toolParams) as Record<string, unknown> | undefined : undefined
    return {
      id,
      datasetName: row.datasetName,
      functionName: gatewayName(row.functionName),
      functionType: row.kind,
      input,
      ...(output !== undefined && { output }),
      episodeId: row.episodeId === null || row.episodeId === undefined ? undefined : uuid(row.episodeId, "episode_id"),
      tags: gatewayTags(row.tags),
      name: row.name ?? undefined,
      toolParams: tools === undefined ? undefined : {
        additional_tools: (tools.tools_available as ReadonlyArray<unknown>).length > 0 ? tools.tools_available as ReadonlyArray<unknown> : undefined,
        allowed_tools: tools.allowed_tools as ReadonlyArray<string> | null,
        tool_choice: tools.tool_choice,
        parallel_tool_calls: tools.parallel_tool_calls as boolean | null
      },
      outputSchema: row.kind === "json" && row.outputSchema !== undefined && row.outputSchema !== null ? json(row.outputSchema, "output_schema") : undefined,
      sourceInferenceId: row.sourceInferenceId === null || row.sourceInferenceId === undefined ? undefined : uuid(row.sourceInferenceId, "source_inference_id"),
      isCustom: row.isCustom,
      staledAt: optionalNumber(row.staledAt),
      updatedAt: row.updatedAt,
      searchText: searchTextOf(input, output)
    }
  })

export const mapWorkflowRun = (row: TzWorkflowRun): Mapped<WorkflowRunRecord> =>
  mapped(row, (row) => {
    const id = uuid(row.runId, "run_id")
    return {
      id,
      variants: Object.fromEntries(Object.entries(row.variantPins).map(([fn, variant]) => [gatewayName(fn), variant])),
      projectName: row.projectName ?? undefined,
      displayName: row.displayName ?? undefined,
      tags: gatewayTags(row.tags),
      timestamp: uuidv7Timestamp(id)
    }
  })

export const mapWorkflowEpisode = (row: TzWorkflowEpisode): Mapped<WorkflowEpisodeRecord> =>
  mapped(row, (row) => {
    const id = uuid(row.episodeId, "episode_id")
    return { id, runId: uuid(row.runId, "run_id"), taskName: row.taskName ?? undefined, tags: gatewayTags(row.tags), timestamp: uuidv7Timestamp(id) }
  })

export interface MappedBatch {
  readonly batch: StoredBatch
  readonly inferences: ReadonlyArray<StoredBatchInference>
}

/** one of a failed batch's errors as TensorZero kept it: a text, its JSON, or an object with a message */
const errorText = (error: unknown): string => {
  const parsed = typeof error === "string" ? (() => {
    try {
      return JSON.parse(error) as unknown
    } catch {
      return error
    }
  })() : error
  if (typeof parsed === "string") return parsed
  if (isObject(parsed) && typeof parsed.message === "string") return parsed.message
  return JSON.stringify(parsed)
}

/** why a batch TensorZero was still waiting for is stored as failed here: this gateway cannot poll another's batch */
export const pendingBatchMessage = "imported from TensorZero while still pending: its results were not collected"

export const mapBatch = (row: TzBatch, workspace: string): Mapped<MappedBatch> =>
  mapped(row, (row) => {
    const batchId = uuid(row.batchId, "batch_id")
    const inferences = row.inferences.map((inference, index): StoredBatchInference => {
      const inferenceId = uuid(inference.inferenceId, "inference_id")
      return {
        batchId,
        workspace,
        inferenceId,
        episodeId: uuid(inference.episodeId, "episode_id"),
        index,
        functionName: gatewayName(inference.functionName),
        variantName: inference.variantName,
        input: gatewayInput(inference.input),
        system: inference.system ?? undefined,
        inputMessages: json(inference.inputMessages, "input_messages") ?? [],
        toolParams: toolParams(inference.toolParams),
        outputSchema: json(inference.outputSchema, "output_schema") ?? undefined,
        inferenceParams: json(inference.inferenceParams, "inference_params") ?? {},
        rawRequest: inference.rawRequest ?? "",
        modelName: gatewayName(inference.modelName),
        modelProviderName: inference.modelProviderName,
        tags: gatewayTags(inference.tags),
        timestamp: uuidv7Timestamp(inferenceId)
      }
    })
    const functionType = inferences.some((inference) => inference.outputSchema !== undefined && inference.outputSchema !== null) ? "json" : "chat"
    const errors = json(row.errors, "errors")
    return {
      batch: {
        id: batchId,
        workspace,
        functionName: gatewayName(row.functionName),
        functionType,
        variantName: row.variantName,
        modelName: gatewayName(row.modelName),
        modelProviderName: row.modelProviderName,
        providerBatchId: "",
        providerBatchData: null,
        batchParams: json(row.batchParams, "batch_params") ?? {},
        status: row.status === "pending" ? "failed" : row.status,
        errorMessage: row.status === "pending"
          ? pendingBatchMessage
          : row.status === "failed"
          ? (Array.isArray(errors) && errors.length > 0 ? errors.map(errorText).join("; ") : "failed in TensorZero")
          : undefined,
        timestamp: uuidv7Timestamp(batchId),
        updatedAt: row.updatedAt
      },
      inferences
    }
  })

/** the embedding model is not stored with TensorZero's examples (its variant's configuration names it) */
export const unknownEmbeddingModel = "unknown (imported from TensorZero)"

export const mapDiclExample = (row: TzDiclExample): Mapped<DiclExample> =>
  mapped(row, (row) => {
    const id = uuid(row.id, "id")
    const output = json(row.output, "output")
    if (row.embedding.length === 0 || !row.embedding.every(Number.isFinite)) return refuse("embedding is empty or not numbers")
    return {
      id,
      functionName: gatewayName(row.functionName),
      variantName: row.variantName,
      input: gatewayInput(row.input),
      output: Array.isArray(output) ? output.map((block) => chatBlock(block, "output")) : jsonOutput(output, "output"),
      embedding: row.embedding,
      embeddingModel: unknownEmbeddingModel,
      createdAt: row.timestamp
    }
  })

export const mapApiKey = (row: TzApiKey, workspace: string): Mapped<ImportedApiKey> =>
  mapped(row, (row) => {
    if (!publicIdPattern.test(row.publicId)) return refuse("public id is not 12 letters and digits", row.publicId)
    const hash = row.hash.trim().toLowerCase()
    if (!/^[0-9a-f]{64}$/.test(hash)) return refuse("hash is not a hex SHA-256")
    return {
      publicId: row.publicId,
      secretHash: Uint8Array.from(hash.match(/../g)!.map((pair) => parseInt(pair, 16))),
      description: row.description ?? undefined,
      createdAt: row.createdAt,
      expiresAt: optionalNumber(row.expiresAt),
      disabledAt: optionalNumber(row.disabledAt),
      workspace
    }
  })

/** the record each stream is mapped to */
export interface MappedRecords {
  readonly api_keys: ImportedApiKey
  /** renamed and checked: its results are built from the imported inferences and feedback (evaluationRuns.ts) */
  readonly evaluation_runs: TzEvaluationRun
  readonly datapoints: NewDatapoint
  readonly inferences: StoredInference
  readonly model_inferences: StoredModelInference
  readonly feedback: StoredFeedback
  readonly workflow_evaluation_runs: WorkflowRunRecord
  readonly workflow_evaluation_episodes: WorkflowEpisodeRecord
  readonly batches: MappedBatch
  readonly dicl_examples: DiclExample
}

/** a workflow evaluation run or episode deleted in TensorZero is not brought back */
const notStaled = <T>(staledAt: number | null | undefined, map: () => Mapped<T>): Mapped<T> =>
  staledAt === null || staledAt === undefined ? map() : skip("deleted in TensorZero")

export const mappers: { readonly [S in StreamName]: (row: StreamRows[S], workspace: string) => Mapped<MappedRecords[S]> } = {
  api_keys: mapApiKey,
  datapoints: mapDatapoint,
  inferences: mapInference,
  model_inferences: mapModelInference,
  feedback: mapFeedback,
  evaluation_runs: (row) => mapped(row, (row) => ({ ...row, runId: uuid(row.runId, "run_id") })),
  workflow_evaluation_runs: (row) => notStaled(row.staledAt, () => mapWorkflowRun(row)),
  workflow_evaluation_episodes: (row) => notStaled(row.staledAt, () => mapWorkflowEpisode(row)),
  batches: mapBatch,
  dicl_examples: (row) => mapDiclExample(row)
}

/** the id a stream's row is reported by */
export const rowIds: { readonly [S in StreamName]: (row: StreamRows[S]) => string } = {
  api_keys: (row) => row.publicId,
  datapoints: (row) => row.id,
  inferences: (row) => row.id,
  model_inferences: (row) => row.id,
  feedback: (row) => row.id,
  evaluation_runs: (row) => row.runId,
  workflow_evaluation_runs: (row) => row.runId,
  workflow_evaluation_episodes: (row) => row.episodeId,
  batches: (row) => row.batchId,
  dicl_examples: (row) => row.id
}
