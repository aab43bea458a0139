/**
 * Stored responses (issue 37, design 4): a response created with `store` is an ordinary
 * inference tagged `gateway::response_store`, read back by the Responses routes. Here: what a
 * stored response is to them (`ResponseRecord`), made from a completed inference or from the
 * stored rows, and who may see it.
 */
import type { StoredInference, StoredModelInference } from "../analytics/records.ts"
import type { Input } from "../api/inference.ts"
import type { ResponseObject } from "../api/openaiResponses.ts"
import { apiKeyTag, reservedTagPrefix, surfaceTag } from "../api/tags.ts"
import { uuidv7Timestamp } from "../ids.ts"
import { type CompletedInference, totalUsage } from "../inference/run.ts"
import type { FinishReason, Usage } from "../inference/types.ts"
import { addUsage, type FunctionOutput } from "../inference/variants/answer.ts"
import { outputItems } from "./items.ts"
import { echoOf, type EchoedSettings } from "./request.ts"
import { responseEnding, responseObject, responsesUsage } from "./response.ts"
import { previousResponseTag, responseModelTag, responsesSurface, responseStoreTag } from "./tags.ts"

export interface ResponseRecord {
  readonly id: string
  /** the workspace of the key that made it: the routes of another workspace never see it */
  readonly workspace: string
  readonly tags: Readonly<Record<string, string>>
  readonly episodeId: string
  /** the input as stored: the whole conversation, earlier turns prepended */
  readonly input: Input
  readonly output: FunctionOutput
  /** the `response` object as a GET answers it */
  readonly response: ResponseObject
}

/** a stored response of this surface, and the caller's own when it came with a key (tenants never see each other's) */
export const isVisible = (tags: Readonly<Record<string, string>>, apiKey: string | undefined): boolean =>
  tags[surfaceTag] === responsesSurface && tags[responseStoreTag] === "true" && (apiKey === undefined || tags[apiKeyTag] === apiKey)

/** what a stored response echoes of its request: the model, metadata and the response it continued; other settings are not kept */
const storedEcho = (tags: Readonly<Record<string, string>>): EchoedSettings =>
  echoOf({
    metadata: Object.fromEntries(Object.entries(tags).filter(([key]) => !key.startsWith(reservedTagPrefix))),
    previous_response_id: tags[previousResponseTag]
  }, true)

interface StoredParts {
  readonly id: string
  readonly workspace: string
  readonly tags: Readonly<Record<string, string>>
  readonly episodeId: string
  readonly variantName: string
  readonly functionName: string
  readonly input: unknown
  readonly output: FunctionOutput
  readonly finishReason: FinishReason | undefined
  readonly usage: Usage
}

/**
 * The same record whether it is read from memory or from the store: the time is the id's,
 * reasoning items come without their signature (no `include` on a GET yet) and the request's
 * settings but the model, metadata and `previous_response_id` are not kept.
 */
const recordOf = (parts: StoredParts): ResponseRecord => {
  const head = { id: parts.id, createdAt: Math.floor(uuidv7Timestamp(parts.id) / 1000), episodeId: parts.episodeId, variantName: parts.variantName }
  const model = parts.tags[responseModelTag] ?? parts.functionName
  const output = outputItems(parts.id, parts.output, undefined, false)
  return {
    id: parts.id,
    workspace: parts.workspace,
    tags: parts.tags,
    episodeId: parts.episodeId,
    input: parts.input as Input,
    output: parts.output,
    response: responseObject({ model, echo: storedEcho(parts.tags) }, head, responseEnding(parts.finishReason), output, responsesUsage(parts.usage))
  }
}

/** the record of a response just answered, for the reads that come before its rows are written */
export const recordOfCompleted = (completed: CompletedInference): ResponseRecord => {
  const { prepared } = completed
  return recordOf({
    id: prepared.inferenceId,
    workspace: prepared.workspace,
    tags: prepared.request.tags ?? {},
    episodeId: prepared.episodeId,
    variantName: completed.variant.name,
    functionName: prepared.functionName,
    input: prepared.storedInput ?? prepared.request.input,
    output: completed.output,
    finishReason: completed.finishReason,
    usage: totalUsage(completed)
  })
}

/** the record of a stored inference and its model calls: the usage is theirs together, the finish reason the last call's */
export const recordOfStored = (inference: StoredInference, calls: ReadonlyArray<StoredModelInference>): ResponseRecord => {
  const last = calls.reduce<StoredModelInference | undefined>((newest, call) => (newest === undefined || call.id > newest.id ? call : newest), undefined)
  return recordOf({
    ...inference,
    finishReason: last?.finishReason,
    usage: addUsage(calls.map((call) => ({ input_tokens: call.inputTokens, output_tokens: call.outputTokens, cached_input_tokens: call.cachedInputTokens })))
  })
}
