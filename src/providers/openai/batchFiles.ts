/**
 * The files of OpenAI's Batch API, as pure functions: the JSON Lines input file (one request
 * per line, keyed by `custom_id`), its multipart upload, and what a finished batch's output and
 * error files say about each request (platform.openai.com/docs/api-reference/batch/request-input
 * and .../request-output). Azure OpenAI writes the same files.
 */
import { type BatchItem, type BatchItemResult, type BatchPoll, TextBody } from "../codec.ts"

type Json = Record<string, any>

/** How the input file addresses every request: the line `url` (the batch's `endpoint`) and, where the server needs it, the model. */
export interface BatchLineTarget {
  /** `/v1/chat/completions`, `/v1/responses`, or Azure's `/chat/completions` */
  readonly endpoint: string
  /**
   * the model every line names in place of the body's (Azure: the deployment, which a single
   * call names in its URL whatever the body says, and which every line of a batch must name)
   */
  readonly model?: string | undefined
}

/** The input file: one `{custom_id, method, url, body}` line per request, the body as built for a single call. */
export const batchInputFile = (items: ReadonlyArray<BatchItem>, target: BatchLineTarget): string => {
  let text = ""
  for (const item of items) {
    const body = target.model === undefined ? item.body : { ...item.body, model: target.model }
    text += `${JSON.stringify({ custom_id: item.id, method: "POST", url: target.endpoint, body })}\n`
  }
  return text
}

/**
 * JSON.stringify escapes line breaks, so every line of the input file is one JSON object that
 * starts with `{`: no line can begin with `--`, and a fixed boundary cannot occur in the file.
 */
const boundary = "gateway-openai-batch-input"

/** The Files API upload (`purpose=batch`, the file as `file`), as `multipart/form-data`. */
export const batchUpload = (fileName: string, jsonl: string): TextBody =>
  new TextBody(
    `multipart/form-data; boundary=${boundary}`,
    `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\n` +
      // Azure refuses a file part without a content type; its documentation sends this one
      `Content-Type: application/json\r\n\r\n${jsonl}\r\n--${boundary}--\r\n`
  )

/** How a batch that holds results ended. */
export type BatchEnding = "completed" | "expired" | "cancelled"

const unanswered: Readonly<Record<BatchEnding, string>> = {
  completed: "the provider's batch completed without an answer to this request",
  expired: "the provider's batch expired before this request ran",
  cancelled: "the provider's batch was cancelled before this request ran"
}

const nothingRan: Readonly<Record<BatchEnding, string>> = {
  completed: "the provider's batch completed without any result",
  expired: "the provider's batch expired before any request ran",
  cancelled: "the provider's batch was cancelled before any request ran"
}

/** One line of an output or error file, read: the request's answer or why it has none, and whether it reached the model. */
interface ReadLine {
  readonly result: BatchItemResult
  readonly ran: boolean
}

const readLine = (line: Json, id: string): ReadLine => {
  const response = line.response
  if (response !== null && typeof response === "object") {
    const status = response.status_code
    const body = response.body
    if (typeof status === "number" && status >= 200 && status < 300 && body !== null && typeof body === "object") {
      return { ran: true, result: { id, ok: true, body: JSON.stringify(body) } }
    }
    const explained = typeof body?.error?.message === "string" ? body.error.message : typeof body === "string" ? body : JSON.stringify(body ?? null)
    return { ran: true, result: { id, ok: false, message: `HTTP ${String(status)}: ${explained}` } }
  }
  const error = line.error
  const message = typeof error?.message === "string" ? error.message : "the provider gave no answer to this request"
  const code = typeof error?.code === "string" ? ` (${error.code})` : ""
  return { ran: false, result: { id, ok: false, message: `${message}${code}` } }
}

/**
 * A finished batch's results, read from the lines of its output and error files as they arrive
 * (`line`), then gathered (`results`): one per submitted id, in order, the first line of an id
 * read (a line for an id not submitted is ignored). A broken line (not JSON, or too long to be
 * read: `undefined`) is no answer: its request counts as unanswered. A request with no line has
 * the ending's explanation. A batch that expired or was cancelled before any request reached
 * the model, or completed without a single line read, failed.
 */
export const batchResultReader = (ids: ReadonlyArray<string>) => {
  const submitted = new Set(ids)
  const read = new Map<string, ReadLine>()
  return {
    line: (text: string | undefined): void => {
      // a line cannot be an object unless it starts with `{`: junk is passed over without a parse
      if (text === undefined || text.trimStart()[0] !== "{") return
      let line: unknown
      try {
        line = JSON.parse(text)
      } catch {
        return
      }
      const id = (line as Json | null)?.custom_id
      if (typeof id !== "string" || !submitted.has(id) || read.has(id)) return
      read.set(id, readLine(line as Json, id))
    },
    results: (ending: BatchEnding): BatchPoll => {
      let ran = false
      for (const line of read.values()) ran ||= line.ran
      if (ending === "completed" ? read.size === 0 : !ran) {
        return { status: "failed", message: nothingRan[ending] }
      }
      return {
        status: "completed",
        results: ids.map((id) => read.get(id)?.result ?? { id, ok: false, message: unanswered[ending] })
      }
    }
  }
}

/** `batchResultReader` over whole files (either may be absent) */
export const batchResults = (ending: BatchEnding, ids: ReadonlyArray<string>, files: ReadonlyArray<string>): BatchPoll => {
  const reader = batchResultReader(ids)
  for (const file of files) for (const text of file.split("\n")) reader.line(text)
  return reader.results(ending)
}

/** Why a batch failed as a whole: its `errors.data[]`, each with its line of the input file. */
export const batchFailureMessage = (batch: Json): string => {
  const data: ReadonlyArray<Json> = Array.isArray(batch.errors?.data) ? batch.errors.data : []
  const reasons = data.flatMap((error) => {
    if (typeof error?.message !== "string") return []
    const where = typeof error.line === "number" ? ` (line ${error.line})` : ""
    const code = typeof error.code === "string" ? `${error.code}: ` : ""
    return [`${code}${error.message}${where}`]
  })
  return reasons.length === 0 ? "the provider's batch failed without a reason" : `the provider's batch failed: ${reasons.join("; ")}`
}
