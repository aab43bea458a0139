/**
 * OpenAI's Batch API as batch hooks, for every server that speaks it (`openai` in both of its
 * APIs, `azure`): the requests are uploaded as a JSON Lines file (`POST files`, purpose
 * `batch`), a batch is created on it (`POST batches`), polled (`GET batches/{id}`), and once it
 * ended its output and error files are read (`GET files/{id}/content`). Where the servers differ
 * (addresses, the line `url`, the model, waiting for the upload) is `OpenAiBatchApi`.
 */
import * as Arr from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Schedule from "effect/Schedule"
import { itemsPerTurn, letIoRun } from "../../eventLoop.ts"
import type { BatchExchange, BatchHooks, BatchPoll } from "../codec.ts"
import { ProviderFailure } from "../failure.ts"
import { nameProblem, providerObjectId, UrlProblem, urlUnder } from "../urls.ts"
import { type BatchEnding, batchFailureMessage, batchInputFile, type BatchLineTarget, batchResultReader, batchUpload } from "./batchFiles.ts"

type Json = Record<string, any>

/** How one server serves the Batch API. */
export interface OpenAiBatchApi extends BatchLineTarget {
  /**
   * the address of a resource of the API by its path segments (`files`, `files/{id}`,
   * `files/{id}/content`, `batches`, `batches/{id}`), built and checked (`../urls.ts`)
   */
  readonly url: (segments: ReadonlyArray<string>) => Result.Result<string, UrlProblem>
  /**
   * whether a batch may be created only once the uploaded file is `processed`: Azure refuses it
   * before (OpenAI accepts it at once)
   */
  readonly awaitsProcessedFile: boolean
}

/** What a codec's target carries for these hooks. */
export interface OpenAiBatchTarget {
  readonly batchApi: OpenAiBatchApi
}

/** OpenAI's own Batch API under `api_base` (`{api_base}/files`, `{api_base}/batches`), for the requests of `endpoint`. */
export const openAiBatchApi = (apiBase: string, endpoint: string): OpenAiBatchApi => {
  const base = apiBase.endsWith("/") ? apiBase : `${apiBase}/`
  return { url: (segments) => urlUnder(base, segments), endpoint, awaitsProcessedFile: false }
}

/** What the gateway keeps of a batch between polls: the ids it submitted, in order (the results answer each). */
interface OpenAiBatchData {
  readonly input_file_id: string
  readonly custom_ids: ReadonlyArray<string>
}

const isBatchData = (data: unknown): data is OpenAiBatchData =>
  typeof data === "object" && data !== null && typeof (data as Json).input_file_id === "string" &&
  Array.isArray((data as Json).custom_ids) && (data as Json).custom_ids.every((id: unknown) => typeof id === "string")

const problem = (message: string) => new ProviderFailure({ message, timedOut: false })

/**
 * The URL of a resource of the API. Its segments are fixed words and ids the provider gave
 * (files, batches), each checked to be an id: a spoofed or garbled answer must not point the
 * next call, and the key it carries, anywhere else.
 */
const urlOf = (api: OpenAiBatchApi, ...segments: ReadonlyArray<string>): Effect.Effect<string, ProviderFailure> => {
  for (const segment of segments) {
    const misnamed = nameProblem("the provider's id", segment, providerObjectId)
    if (misnamed !== undefined) return Effect.fail(problem(misnamed))
  }
  const url = api.url(segments)
  return Result.isFailure(url) ? Effect.fail(problem(url.failure.message)) : Effect.succeed(url.success)
}

/** an answer of the API as the object it must be (a `file`, a `batch`, with a string `id`) */
const objectOf = (what: string) => (text: string): Effect.Effect<Json, ProviderFailure> => {
  try {
    const parsed = JSON.parse(text)
    if (parsed !== null && typeof parsed === "object" && typeof parsed.id === "string") return Effect.succeed(parsed)
  } catch {
    // reported below with the answer's beginning
  }
  return Effect.fail(problem(`the provider's answer is not a ${what} object: ${text.length > 200 ? `${text.slice(0, 200)}...` : text}`))
}

/** Azure's uploads are checked after 250 ms, 500 ms, 1 s, 2 s, 4 s, then every 5 s: about two minutes in all */
const processingChecks = Schedule.recurs(30).pipe(
  Schedule.modifyDelay(({ attempt }) => Effect.succeed(Duration.millis(Math.min(250 * 2 ** (attempt - 1), 5000))))
)

/** the statuses of a file that will not become `processed` */
const deadFileStatuses: ReadonlySet<string> = new Set(["error", "deleting", "deleted"])

const untilProcessed = (api: OpenAiBatchApi, exchange: BatchExchange, file: Json): Effect.Effect<void, ProviderFailure> => {
  if (!api.awaitsProcessedFile || file.status === "processed") return Effect.void
  const settled = (checked: Json) => checked.status === "processed" || deadFileStatuses.has(String(checked.status))
  if (settled(file)) return refusedFile(file)
  return urlOf(api, "files", file.id).pipe(
    Effect.flatMap((url) => exchange({ method: "GET", url })),
    Effect.flatMap(objectOf("file")),
    Effect.repeat({ schedule: processingChecks, until: settled }),
    Effect.flatMap((checked) =>
      checked.status === "processed"
        ? Effect.void
        : settled(checked)
        ? refusedFile(checked)
        : Effect.fail(problem(`the provider had not processed the uploaded batch file ${file.id} after two minutes (status ${String(checked.status)})`))
    )
  )
}

const refusedFile = (file: Json): Effect.Effect<void, ProviderFailure> =>
  Effect.fail(problem(`the provider refused the uploaded batch file ${file.id} (status ${String(file.status)})${
    typeof file.status_details === "string" ? `: ${file.status_details}` : ""
  }`))

/** the statuses of a batch still running (Azure capitalises them: `Validating`) */
const runningStatuses: ReadonlySet<string> = new Set(["validating", "in_progress", "finalizing", "cancelling"])

const endings: ReadonlySet<string> = new Set<BatchEnding>(["completed", "expired", "cancelled"])

/** output and error files can be large (a batch's input alone may be 200 MB); read a line at a time, they bound the download's time */
const maxResultFileBytes = 500 * 1024 * 1024

export const openAiBatchHooks: BatchHooks<OpenAiBatchTarget> = {
  start: (target, items, exchange) => {
    const api = target.batchApi
    return Effect.gen(function*() {
      // tens of thousands of lines: written a slice at a time, the requests in flight served between slices
      let jsonl = ""
      for (const slice of Arr.chunksOf(items, itemsPerTurn)) {
        jsonl += batchInputFile(slice, api)
        yield* letIoRun
      }
      const upload = batchUpload(`batch_${items[0]?.id ?? "empty"}.jsonl`, jsonl)
      const file = yield* Effect.flatMap(exchange({ method: "POST", url: yield* urlOf(api, "files"), body: upload }), objectOf("file"))
      yield* untilProcessed(api, exchange, file)
      const batch = yield* Effect.flatMap(
        exchange({
          method: "POST",
          url: yield* urlOf(api, "batches"),
          body: { input_file_id: file.id, endpoint: api.endpoint, completion_window: "24h" }
        }),
        objectOf("batch")
      )
      // checked now, before it is kept: every poll puts it into a URL
      yield* urlOf(api, "batches", batch.id)
      const data: OpenAiBatchData = { input_file_id: file.id, custom_ids: items.map((item) => item.id) }
      return { providerBatchId: batch.id, data }
    })
  },
  poll: (target, handle, exchange, download) => {
    const api = target.batchApi
    const data = handle.data
    if (!isBatchData(data)) return Effect.fail(problem(`the stored handle of batch ${handle.providerBatchId} is not an OpenAI batch's`))
    return Effect.gen(function*() {
      const batch = yield* Effect.flatMap(
        exchange({ method: "GET", url: yield* urlOf(api, "batches", handle.providerBatchId) }),
        objectOf("batch")
      )
      const status = typeof batch.status === "string" ? batch.status.toLowerCase() : String(batch.status)
      if (runningStatuses.has(status)) return { status: "pending" } satisfies BatchPoll
      if (status === "failed") return { status: "failed", message: batchFailureMessage(batch) } satisfies BatchPoll
      if (!endings.has(status)) {
        return { status: "failed", message: `the provider's batch has a status the gateway does not know: ${status}` } satisfies BatchPoll
      }
      // read as they arrive, a line at a time: a file of hundreds of MB is never held whole
      const results = batchResultReader(data.custom_ids)
      for (const fileId of [batch.output_file_id, batch.error_file_id]) {
        if (typeof fileId !== "string" || fileId === "") continue
        const url = yield* urlOf(api, "files", fileId, "content")
        yield* download({ method: "GET", url, maxResponseBytes: maxResultFileBytes }, (line) => {
          results.line(line)
          return undefined
        })
      }
      return results.results(status as BatchEnding)
    })
  }
}
