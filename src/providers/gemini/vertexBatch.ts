/**
 * Batches on Vertex AI (cloud.google.com/vertex-ai/generative-ai/docs/multimodal/batch-prediction-from-cloud-storage):
 * the requests go as a JSON Lines file (`{"request": <GenerateContentRequest>}` a line) uploaded
 * to Cloud Storage under `input_uri_prefix`; `POST .../batchPredictionJobs` starts a job reading
 * it and writing under `output_uri_prefix`; `GET <job name>` tells its `state` (`JOB_STATE_*`)
 * and, once it ended, `outputInfo.gcsOutputDirectory`, where `predictions*.jsonl` files hold
 * one line per request: the request as sent, and its `response` or, when it failed, a `status`.
 *
 * Vertex does not promise the output's order, nor to keep fields beside `request`; it does write
 * each request back. So each request carries its id as a label (`labels` is a field of Vertex's
 * GenerateContentRequest, used for billing reports), and the answers are matched by it. The raw
 * request the gateway keeps is the body as built, without that label.
 *
 * Where the files go is configuration: `[provider_types.gcp_vertex_gemini.batch]`, or the
 * provider table's own `batch` (TensorZero's names), with `storage_api_base` in place of Cloud
 * Storage's address (a test's fake, a proxy).
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { BatchHooks, BatchItemResult, BatchPoll } from "../codec.ts"
import { quoted } from "../../untrusted.ts"
import { asFolder, bucketProblem, downloadObjectLines, gsUriOf, listObjects, parseGsUri, type StorageLocation, uploadObject } from "../gcp/cloudStorage.ts"
import { vertexModelProblem } from "../gcp/vertex.ts"
import { BaseUrl, nameProblem, providerObjectId, urlUnder } from "../urls.ts"
import { ProviderFailure } from "../failure.ts"
import { type BatchEnding, endedBatch, type GeminiBatchData, idsOf, jsonObject, maxBatchResultBytes, statusText } from "./batchResults.ts"
import type { GeminiTarget } from "./target.ts"

const gsPrefix = Schema.String.check(
  Schema.makeFilter((uri: string) => {
    const location = parseGsUri(uri)
    if (location === undefined) return `a Cloud Storage location gs://<bucket>/<path>/ is expected, not "${uri.slice(0, 100)}"`
    return bucketProblem(location.bucket)
  })
)

// a literal field would make a wrong value fail the whole table; a check names the field
const storageType = Schema.String.check(
  Schema.makeFilter((type: string) =>
    type === "cloud_storage" ? undefined : `unknown storage_type "${type.slice(0, 100)}": Vertex AI batches support "cloud_storage"`
  )
)

/** `[provider_types.gcp_vertex_gemini.batch]`, or a provider table's `batch` */
export const VertexBatchSettings = Schema.Struct({
  storage_type: storageType,
  input_uri_prefix: gsPrefix,
  output_uri_prefix: gsPrefix,
  /** Cloud Storage's JSON API address (default https://storage.googleapis.com/) */
  storage_api_base: Schema.optional(BaseUrl)
})
export type VertexBatchSettings = typeof VertexBatchSettings.Type

export const inferenceIdLabel = "gateway_inference_id"

export const noBatchSettings =
  `the gcp_vertex_gemini provider has no batch settings: Vertex AI batches read and write Cloud Storage; set [provider_types.gcp_vertex_gemini.batch] (storage_type = "cloud_storage", input_uri_prefix = "gs://<bucket>/<path>/", output_uri_prefix = "gs://<bucket>/<path>/") or the provider table's batch`

const unsupported = (message: string) => new ProviderFailure({ message, timedOut: false, unsupported: true })

const targetOf = (target: GeminiTarget) => {
  const batch = target.batch
  if (batch?.api !== "vertex") return Effect.fail(unsupported(`the ${target.type} provider has no Vertex AI batch address`))
  return "problem" in batch ? Effect.fail(unsupported(batch.problem)) : Effect.succeed(batch)
}

const states: Readonly<Record<string, BatchEnding | "pending">> = {
  JOB_STATE_SUCCEEDED: "succeeded",
  JOB_STATE_PARTIALLY_SUCCEEDED: "succeeded",
  JOB_STATE_FAILED: "failed",
  JOB_STATE_CANCELLED: "cancelled",
  JOB_STATE_EXPIRED: "expired"
}

/** one request's line of the input file: its body as built, with its id among its labels */
export const inputLine = (id: string, body: Record<string, unknown>): string => {
  const labels = typeof body.labels === "object" && body.labels !== null ? body.labels : {}
  return JSON.stringify({ request: { ...body, labels: { ...labels, [inferenceIdLabel]: id } } })
}

const maxStatusLength = 1000

/**
 * The result of one output line by its request's id (a request answered twice keeps its first
 * answer). A line that cannot be read (not JSON, or too long: `undefined`) cannot be matched:
 * its request stays unanswered.
 */
export const outputLine = (line: string | undefined, found: Map<string, BatchItemResult>): void => {
  // a line cannot be an object unless it starts with `{`: junk is passed over without a parse
  if (line === undefined || line.trimStart()[0] !== "{") return
  let json: any
  try {
    json = JSON.parse(line)
  } catch {
    return
  }
  const id = json?.request?.labels?.[inferenceIdLabel]
  if (typeof id !== "string" || found.has(id)) return
  const status = typeof json.status === "string" ? json.status : ""
  if (status === "" && typeof json.response === "object" && json.response !== null) {
    found.set(id, { id, ok: true, body: JSON.stringify(json.response) })
  } else {
    found.set(id, {
      id,
      ok: false,
      message: status === "" ? "the provider answered this request without a response" : status.slice(0, maxStatusLength)
    })
  }
}

/** `outputLine` over a whole file */
export const outputResults = (text: string, found: Map<string, BatchItemResult>): void => {
  for (const line of text.split("\n")) outputLine(line, found)
}

const failure = (message: string) => new ProviderFailure({ message, timedOut: false })

/**
 * The URL of a batch job by its name as Vertex gave it (`projects/<P>/locations/<L>/batchPredictionJobs/<id>`),
 * checked part by part: a spoofed or garbled answer must not point the polls, and the access
 * token they carry, anywhere else.
 */
const jobUrl = (apiBase: string, name: string): Result.Result<string, ProviderFailure> => {
  const parts = name.split("/")
  const shaped = parts.length === 6 && parts[0] === "projects" && parts[2] === "locations" && parts[4] === "batchPredictionJobs"
  const problem = shaped
    ? vertexModelProblem({ project: parts[1], location: parts[3] }) ?? nameProblem("job id", parts[5], providerObjectId)
    : "expected projects/<project>/locations/<location>/batchPredictionJobs/<id>"
  if (problem !== undefined) return Result.fail(failure(`the provider named its batch job ${quoted(name, 200)}, which is no Vertex AI batch job name: ${problem}`))
  const url = urlUnder(apiBase, parts)
  return Result.mapError(url, (refused) => failure(refused.message))
}

const isPredictions = (name: string) => /^predictions[^/]*\.jsonl$/.test(name.slice(name.lastIndexOf("/") + 1))

export const vertexBatch: BatchHooks<GeminiTarget> = {
  start: (target, items, exchange) =>
    Effect.gen(function*() {
      const batch = yield* targetOf(target)
      const name = `gateway-batch-${items[0]?.id ?? "empty"}`
      const input: StorageLocation = { bucket: batch.input.bucket, name: `${asFolder(batch.input.name)}${name}.jsonl` }
      yield* uploadObject(exchange, batch.storageApiBase, input, "application/jsonl", items.map((item) => inputLine(item.id, item.body)).join("\n") + "\n")
      const text = yield* exchange({
        method: "POST",
        url: batch.jobsUrl,
        body: {
          displayName: name,
          model: batch.model,
          inputConfig: { instancesFormat: "jsonl", gcsSource: { uris: [gsUriOf(input)] } },
          outputConfig: { predictionsFormat: "jsonl", gcsDestination: { outputUriPrefix: batch.outputUriPrefix } }
        }
      })
      const job = yield* jsonObject(text, "the batch job creation")
      if (typeof job.name !== "string" || job.name === "") {
        return yield* Effect.fail(new ProviderFailure({ message: "the provider accepted the batch job without naming it", timedOut: false }))
      }
      // checked now, before it is kept: every poll puts it into a URL
      yield* Effect.fromResult(jobUrl(batch.apiBase, job.name))
      const data: GeminiBatchData = { ids: items.map((item) => item.id) }
      return { providerBatchId: job.name, data }
    }),
  poll: (target, handle, exchange, download) =>
    Effect.gen(function*() {
      const batch = yield* targetOf(target)
      const ids = yield* idsOf(handle.data)
      const url = yield* Effect.fromResult(jobUrl(batch.apiBase, handle.providerBatchId))
      const job = yield* Effect.flatMap(exchange({ method: "GET", url }), (text) => jsonObject(text, "the batch job request"))
      const ending = typeof job.state === "string" ? states[job.state] : undefined
      // queued, pending, running, cancelling, paused, updating (or a state this code does not know): not over yet
      if (ending === undefined || ending === "pending") return { status: "pending" } satisfies BatchPoll
      const found = new Map<string, BatchItemResult>()
      // a job cut short keeps what it wrote: its answered requests still count
      const directory = typeof job.outputInfo?.gcsOutputDirectory === "string" ? parseGsUri(job.outputInfo.gcsOutputDirectory) : undefined
      if (directory !== undefined) {
        const misnamed = bucketProblem(directory.bucket)
        if (misnamed !== undefined) {
          return yield* Effect.fail(failure(`the provider's batch job names its output ${quoted(job.outputInfo.gcsOutputDirectory, 200)}: ${misnamed}`))
        }
        const names = yield* listObjects(exchange, batch.storageApiBase, directory.bucket, asFolder(directory.name))
        // each read a line at a time as it arrives, never held whole
        for (const name of names.filter(isPredictions)) {
          yield* downloadObjectLines(download, batch.storageApiBase, { bucket: directory.bucket, name }, maxBatchResultBytes, (line) => {
            outputLine(line, found)
            return undefined
          })
        }
      }
      return endedBatch(ids, found, ending, statusText(job.error))
    })
}
