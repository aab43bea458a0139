/**
 * OpenAI's Batch API as a local server (`FakeBatchProvider`), in two dialects sharing one
 * implementation: OpenAI's (`{url}/v1/files`, `{url}/v1/batches`, a Bearer key) and Azure
 * OpenAI's (`{endpoint}/openai/files?api-version=...`, `.../openai/batches?api-version=...`, the
 * `api-key` header, uploads `pending` when first looked at and `processed` after, a batch refused
 * on an unprocessed upload, lines that must name the deployment).
 * It keeps uploads, validates each input line as the real API does (a wrong `url`, a duplicate
 * `custom_id` or, on Azure, another model fail the batch), and writes output and error files as
 * OpenAI documents them (platform.openai.com/docs/api-reference/batch/request-output): one line
 * per request, `{id, custom_id, response: {status_code, request_id, body}, error}`.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { defaultAnswer, type FakeBatchEnding, type FakeBatchProvider } from "./fakeBatch.ts"

type Json = Record<string, any>

export const openAiBatchFakeKey = "sk-openai-batch-fake-key"
export const azureBatchFakeKey = "azure-batch-fake-key"
export const azureBatchFakeDeployment = "gpt-4o-mini-batch"
export const azureBatchFakeApiVersion = "2024-10-21"
/** the model the OpenAI configuration names */
export const openAiBatchFakeModel = "gpt-4o-mini"

/** What differs between OpenAI's server and Azure's. */
interface Dialect {
  readonly name: "openai" | "azure"
  /** the path of the API's resources below the server (`/v1`, `/openai`) */
  readonly prefix: string
  readonly authorized: (headers: http.IncomingHttpHeaders) => boolean
  readonly unauthorized: (headers: http.IncomingHttpHeaders) => Reply
  /** the query every request must carry (Azure's `api-version`), or why it is refused */
  readonly queryProblem: (query: URLSearchParams) => Reply | undefined
  /** the line `url`s a batch's `endpoint` may be */
  readonly endpoints: ReadonlyArray<string>
  /** the model every line must name (Azure: the deployment) */
  readonly requiredModel?: string
  /** the status of an upload when it is answered, and the status code of that answer */
  readonly uploadStatus: string
  readonly uploadCode: number
  /** how the batch object spells a status (Azure's answers capitalise `Validating`) */
  readonly statusText: (status: string) => string
}

interface Reply {
  readonly status: number
  readonly body: string | Buffer
  readonly contentType?: string
}

const json = (body: unknown, status = 200): Reply => ({ status, body: JSON.stringify(body), contentType: "application/json" })

const openAiError = (status: number, message: string, code: string | null = null, type = "invalid_request_error"): Reply =>
  json({ error: { message, type, param: null, code } }, status)

const openAiDialect = (key: string): Dialect => ({
  name: "openai",
  prefix: "/v1",
  authorized: (headers) => headers.authorization === `Bearer ${key}`,
  unauthorized: (headers) => {
    const sent = String(headers.authorization ?? "").replace(/^Bearer /, "")
    // OpenAI echoes the refused key masked but for its ends
    return openAiError(401, `Incorrect API key provided: ${sent.slice(0, 3)}*****${sent.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`, "invalid_api_key")
  },
  queryProblem: () => undefined,
  endpoints: ["/v1/chat/completions", "/v1/responses"],
  uploadStatus: "processed",
  uploadCode: 200,
  statusText: (status) => status
})

const azureError = (status: number, code: string, message: string): Reply => json({ error: { code, message } }, status)

const azureDialect = (key: string, deployment: string, apiVersion: string): Dialect => ({
  name: "azure",
  prefix: "/openai",
  authorized: (headers) => headers["api-key"] === key,
  unauthorized: () =>
    azureError(401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."),
  queryProblem: (query) =>
    query.get("api-version") === apiVersion ? undefined : azureError(404, "404", "Resource not found"),
  endpoints: ["/chat/completions"],
  requiredModel: deployment,
  uploadStatus: "pending",
  uploadCode: 201,
  statusText: (status) => status === "validating" ? "Validating" : status
})

interface StoredFile {
  readonly id: string
  readonly filename: string
  readonly purpose: string
  /** a result file may be bytes (`outputFile`) */
  readonly content: string | Buffer
  status: string
}

interface FakeBatch {
  readonly id: string
  readonly endpoint: string
  readonly inputFileId: string
  readonly createdAt: number
  readonly requests: ReadonlyArray<{ readonly id: string; readonly body: any }>
  /** the input's problems: the batch fails with them */
  readonly lineErrors: ReadonlyArray<Json>
  readonly ending: FakeBatchEnding
  readonly pollsUntilDone: number
  polls: number
  inFlight: number
  /** set once it ended */
  final?: Json
}

export interface FakeOpenAiBatch extends FakeBatchProvider {
  /** what a creation is answered while `refuseCreation` is set (default: OpenAI's 500) */
  creationRefusal: { status: number; message: string }
  /** when set, what a batch that completes from now on has as its output file instead of its answers (junk, say) */
  outputFile: Buffer | undefined
}

export interface FakeBatchOptions {
  readonly key?: string
}

/** the first user text of a Chat Completions or Responses API body */
const firstUserText = (body: any): string | undefined => {
  const turns: ReadonlyArray<any> = Array.isArray(body?.messages) ? body.messages : Array.isArray(body?.input) ? body.input : []
  const user = turns.find((turn) => turn?.role === "user")
  if (typeof user?.content === "string") return user.content
  const part = Array.isArray(user?.content) ? user.content.find((item: any) => typeof item?.text === "string") : undefined
  return part?.text
}

/** the token counts of every answer: fixed input, one output token per word */
export const fakeUsage = (answer: string) => ({ input: 11, output: answer.split(" ").length })

/** A model's answer to one line as the endpoint writes it: a chat.completion, or a Responses API response. */
const answerBody = (endpoint: string, index: number, model: string, answer: string): Json => {
  const usage = fakeUsage(answer)
  if (endpoint === "/v1/responses") {
    return {
      id: `resp_batch${index}`,
      object: "response",
      created_at: 1733000000,
      status: "completed",
      error: null,
      incomplete_details: null,
      model,
      output: [{ type: "message", id: `msg_batch${index}`, status: "completed", role: "assistant", content: [{ type: "output_text", text: answer, annotations: [] }] }],
      usage: { input_tokens: usage.input, input_tokens_details: { cached_tokens: 0 }, output_tokens: usage.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: usage.input + usage.output }
    }
  }
  return {
    id: `chatcmpl-batch${index}`,
    object: "chat.completion",
    created: 1733000000,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: answer, refusal: null }, logprobs: null, finish_reason: "stop" }],
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 }
    },
    system_fingerprint: "fp_batch"
  }
}

/** the per-request error of `partial` endings: a request the model refused, as OpenAI writes it in the error file */
export const fakeRequestError = "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens."
export const fakeExpiredMessage = "This request could not be executed before the completion window expired."
export const fakeCancelledMessage = "This request was not executed because the batch was cancelled."
export const fakeBatchFailure = "Enqueued token limit reached for gpt-4o-mini in organization org-fake. Limit: 90,000 enqueued tokens. Please try submitting fewer batches or with smaller sizes."

/** One server in one dialect. */
const startFake = async (dialect: Dialect, urlOf: (server: string) => string): Promise<FakeOpenAiBatch> => {
  const files = new Map<string, StoredFile>()
  const batches = new Map<string, FakeBatch>()
  const requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders }> = []
  let counter = 0
  const nextId = () => (++counter).toString(16).padStart(8, "0")
  const defaults = () => ({
    ending: "complete" as FakeBatchEnding,
    pollsUntilDone: 1,
    outage: false,
    refuseCreation: false,
    creationRefusal: { status: 500, message: "The server had an error while processing your request. Sorry about that!" },
    outputFile: undefined as Buffer | undefined,
    answer: (_id: string, body: any) => defaultAnswer(firstUserText(body)),
    pollDelayMs: 0
  })
  let maxConcurrentPolls = 0

  const fileObject = (file: StoredFile) => ({
    object: "file",
    id: file.id,
    purpose: file.purpose,
    filename: file.filename,
    bytes: Buffer.byteLength(file.content),
    created_at: 1733000000,
    status: file.status,
    status_details: null
  })

  const store = (filename: string, purpose: string, content: string | Buffer, status = "processed"): StoredFile => {
    const file = { id: `file-${nextId()}`, filename, purpose, content, status }
    files.set(file.id, file)
    return file
  }

  const upload = (contentType: string, body: string): Reply => {
    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType)
    if (!contentType.startsWith("multipart/form-data") || boundary === null) {
      return openAiError(400, "Invalid file format. Expected a multipart/form-data upload.")
    }
    const fields = new Map<string, { filename?: string; contentType?: string; value: string }>()
    for (const part of body.split(`--${boundary[1] ?? boundary[2]}`).slice(1)) {
      if (part.startsWith("--")) break
      const [head, ...rest] = part.slice(2).split("\r\n\r\n")
      const name = /name="([^"]*)"/.exec(head)?.[1]
      if (name === undefined) continue
      fields.set(name, {
        filename: /filename="([^"]*)"/.exec(head)?.[1],
        contentType: /content-type:\s*([^\r\n]+)/i.exec(head)?.[1],
        value: rest.join("\r\n\r\n").replace(/\r\n$/, "")
      })
    }
    const purpose = fields.get("purpose")?.value
    const file = fields.get("file")
    if (purpose !== "batch") return openAiError(400, `Invalid value for 'purpose': ${JSON.stringify(purpose)}.`, null)
    if (file?.filename === undefined) return openAiError(400, "Missing required parameter: 'file'.")
    if (!file.filename.endsWith(".jsonl")) return openAiError(400, "Invalid file format for Batch API. Must be .jsonl")
    if (dialect.name === "azure" && file.contentType === undefined) return azureError(400, "invalidPayload", "The file has no or an empty content type specified.")
    return json(fileObject(store(file.filename, purpose, file.value, dialect.uploadStatus)), dialect.uploadCode)
  }

  /** the input file's lines, and what makes them unfit for the batch (OpenAI's validation, reported when the batch fails) */
  const readInput = (file: StoredFile, endpoint: string) => {
    const lines: Array<{ id: string; body: any }> = []
    const errors: Array<Json> = []
    const seen = new Set<string>()
    file.content.toString().split("\n").forEach((text, index) => {
      if (text.trim() === "") return
      const line = index + 1
      let parsed: any
      try {
        parsed = JSON.parse(text)
      } catch {
        errors.push({ code: "invalid_json_line", message: "This line is not parseable as valid JSON.", param: null, line })
        return
      }
      if (parsed.url !== endpoint) {
        errors.push({ code: "mismatched_endpoint", message: `The provided url '${parsed.url}' does not match the batch endpoint '${endpoint}'.`, param: "url", line })
      }
      if (parsed.method !== "POST") errors.push({ code: "invalid_request", message: "The method must be POST.", param: "method", line })
      if (seen.has(parsed.custom_id)) errors.push({ code: "duplicate_custom_id", message: "The custom_id for this request is a duplicate of another request.", param: "custom_id", line })
      if (dialect.requiredModel !== undefined && parsed.body?.model !== dialect.requiredModel) {
        errors.push({ code: "model_not_found", message: `The provided model '${parsed.body?.model}' is not a global batch deployment of this resource.`, param: "body.model", line })
      }
      seen.add(parsed.custom_id)
      lines.push({ id: parsed.custom_id, body: parsed.body })
    })
    if (lines.length === 0 && errors.length === 0) errors.push({ code: "empty_file", message: "The batch input file is empty.", param: null, line: null })
    return { lines, errors }
  }

  const create = (body: any): Reply => {
    if (fake.refuseCreation) return openAiError(fake.creationRefusal.status, fake.creationRefusal.message, null, fake.creationRefusal.status >= 500 ? "server_error" : "invalid_request_error")
    const input = files.get(body?.input_file_id)
    if (input === undefined) return openAiError(400, `No such File object: ${body?.input_file_id}`, null)
    if (dialect.name === "azure" && input.status !== "processed") {
      return azureError(400, "invalidPayload", `The input file ${input.id} is not processed yet (status ${input.status}).`)
    }
    if (!dialect.endpoints.includes(body?.endpoint)) {
      return openAiError(400, `Invalid value: '${body?.endpoint}'. Supported values are: ${dialect.endpoints.map((endpoint) => `'${endpoint}'`).join(", ")}.`)
    }
    if (body?.completion_window !== "24h") return openAiError(400, `Invalid value: '${body?.completion_window}'. Supported values are: '24h'.`)
    const { lines, errors } = readInput(input, body.endpoint)
    const batch: FakeBatch = {
      id: `batch_${nextId()}`,
      endpoint: body.endpoint,
      inputFileId: input.id,
      createdAt: 1733000000,
      requests: lines,
      lineErrors: errors,
      ending: fake.ending,
      pollsUntilDone: fake.pollsUntilDone,
      polls: 0,
      inFlight: 0
    }
    batches.set(batch.id, batch)
    return json(batchObject(batch, "validating", {}))
  }

  const batchObject = (batch: FakeBatch, status: string, fields: Json): Json => ({
    id: batch.id,
    object: "batch",
    endpoint: batch.endpoint,
    errors: null,
    input_file_id: batch.inputFileId,
    completion_window: "24h",
    status: dialect.statusText(status),
    output_file_id: null,
    error_file_id: null,
    created_at: batch.createdAt,
    in_progress_at: null,
    expires_at: batch.createdAt + 86400,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    request_counts: { total: batch.requests.length, completed: 0, failed: 0 },
    metadata: null,
    ...fields
  })

  const resultLine = (batch: FakeBatch, index: number, response: Json | null, error: Json | null) => ({
    id: `batch_req_${batch.id.slice(6)}${index.toString(16).padStart(4, "0")}`,
    custom_id: batch.requests[index].id,
    response,
    error
  })

  /** the batch once ended as its ending says: its status, files and counts */
  const finish = (batch: FakeBatch): Json => {
    if (batch.lineErrors.length > 0 || batch.ending === "fail") {
      const data = batch.lineErrors.length > 0
        ? batch.lineErrors
        : [{ code: "token_limit_exceeded", message: fakeBatchFailure, param: null, line: null }]
      return batchObject(batch, "failed", { errors: { object: "list", data }, failed_at: batch.createdAt + 60 })
    }
    const output: Array<Json> = []
    const errors: Array<Json> = []
    batch.requests.forEach((request, index) => {
      const answered = index % 2 === 0 || batch.ending === "complete"
      if (answered) {
        const body = answerBody(batch.endpoint, index, String(request.body?.model ?? "unknown"), fake.answer(request.id, request.body))
        output.push(resultLine(batch, index, { status_code: 200, request_id: `req_${index}`, body }, null))
      } else if (batch.ending === "partial") {
        const body = { error: { message: fakeRequestError, type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } }
        errors.push(resultLine(batch, index, { status_code: 400, request_id: `req_${index}`, body }, null))
      } else {
        const expired = batch.ending === "expire"
        errors.push(resultLine(batch, index, null, expired
          ? { code: "batch_expired", message: fakeExpiredMessage }
          : { code: "batch_cancelled", message: fakeCancelledMessage }))
      }
    })
    const jsonl = (lines: ReadonlyArray<Json>) => lines.map((line) => `${JSON.stringify(line)}\n`).join("")
    const outputFile = fake.outputFile !== undefined
      ? store(`batch_${batch.id}_output.jsonl`, "batch_output", fake.outputFile)
      : output.length === 0
      ? null
      : store(`batch_${batch.id}_output.jsonl`, "batch_output", jsonl(output))
    const errorFile = errors.length === 0 ? null : store(`batch_${batch.id}_error.jsonl`, "batch_output", jsonl(errors))
    const status = batch.ending === "expire" ? "expired" : batch.ending === "cancel" ? "cancelled" : "completed"
    const at = batch.createdAt + 120
    return batchObject(batch, status, {
      output_file_id: outputFile?.id ?? null,
      error_file_id: errorFile?.id ?? null,
      in_progress_at: batch.createdAt + 1,
      completed_at: status === "completed" ? at : null,
      expired_at: status === "expired" ? at : null,
      cancelling_at: status === "cancelled" ? at - 10 : null,
      cancelled_at: status === "cancelled" ? at : null,
      request_counts: {
        total: batch.requests.length,
        completed: output.length,
        failed: batch.ending === "partial" ? errors.length : 0
      }
    })
  }

  /** a status request: still running for `pollsUntilDone` polls, then ended for good */
  const status = async (batch: FakeBatch): Promise<Reply> => {
    batch.inFlight += 1
    maxConcurrentPolls = Math.max(maxConcurrentPolls, batch.inFlight)
    try {
      if (fake.pollDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.pollDelayMs))
      batch.polls += 1
      if (batch.final !== undefined) return json(batch.final)
      if (batch.polls <= batch.pollsUntilDone) {
        const last = batch.polls === batch.pollsUntilDone
        const running = batch.polls === 1 ? "validating" : last && batch.ending === "cancel" ? "cancelling" : last ? "finalizing" : "in_progress"
        return json(batchObject(batch, running, running === "validating" ? {} : { in_progress_at: batch.createdAt + 1 }))
      }
      batch.final = finish(batch)
      return json(batch.final)
    } finally {
      batch.inFlight -= 1
    }
  }

  const route = async (method: string, url: URL, headers: http.IncomingHttpHeaders, text: string): Promise<Reply> => {
    if (!dialect.authorized(headers)) return dialect.unauthorized(headers)
    const queryProblem = dialect.queryProblem(url.searchParams)
    if (queryProblem !== undefined) return queryProblem
    const path = url.pathname.startsWith(`${dialect.prefix}/`) ? url.pathname.slice(dialect.prefix.length) : ""
    const outage = () => openAiError(503, "The server is overloaded or not ready yet.", null, "server_error")
    if (method === "POST" && path === "/files") return upload(String(headers["content-type"] ?? ""), text)
    if (method === "POST" && path === "/batches") {
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        return openAiError(400, "We could not parse the JSON body of your request.")
      }
      return create(body)
    }
    const batchMatch = /^\/batches\/([^/]+)$/.exec(path)
    if (method === "GET" && batchMatch !== null) {
      const batch = batches.get(decodeURIComponent(batchMatch[1]))
      if (batch === undefined) return openAiError(404, `No batch found with id '${batchMatch[1]}'.`)
      return fake.outage ? outage() : status(batch)
    }
    const fileMatch = /^\/files\/([^/]+)(\/content)?$/.exec(path)
    if (method === "GET" && fileMatch !== null) {
      const file = files.get(decodeURIComponent(fileMatch[1]))
      if (file === undefined) return openAiError(404, `No such File object: ${fileMatch[1]}`)
      if (fileMatch[2] === undefined) {
        const answer = json(fileObject(file))
        // Azure processes an upload in the background: still pending when first looked at, processed after
        file.status = "processed"
        return answer
      }
      return fake.outage ? outage() : { status: 200, body: file.content, contentType: "application/octet-stream" }
    }
    return openAiError(404, `Invalid URL (${method} ${url.pathname})`)
  }

  const sockets = new Set<import("node:net").Socket>()
  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part) => parts.push(part))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://fake")
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers })
      void route(req.method ?? "", url, req.headers, Buffer.concat(parts).toString("utf8")).then((reply) => {
        res.writeHead(reply.status, { "content-type": reply.contentType ?? "application/json" })
        res.end(reply.body)
      })
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  const fake: FakeOpenAiBatch = {
    url: urlOf(`http://127.0.0.1:${port}`),
    ...defaults(),
    get batches() {
      return [...batches.values()].map((batch) => ({ id: batch.id, requests: batch.requests }))
    },
    requests,
    get maxConcurrentPolls() {
      return maxConcurrentPolls
    },
    reset() {
      Object.assign(fake, defaults())
      files.clear()
      batches.clear()
      requests.length = 0
      maxConcurrentPolls = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  return fake
}

/** OpenAI's Batch API; `url` is the `api_base` to configure (`http://127.0.0.1:<port>/v1`). */
export const startOpenAiBatchFake = (options: FakeBatchOptions = {}): Promise<FakeOpenAiBatch> =>
  startFake(openAiDialect(options.key ?? openAiBatchFakeKey), (server) => `${server}/v1`)

/** Azure OpenAI's Batch API for the deployment `azureBatchFakeDeployment`; `url` is the `endpoint` to configure. */
export const startAzureBatchFake = (options: FakeBatchOptions & { readonly deployment?: string } = {}): Promise<FakeOpenAiBatch> =>
  startFake(
    azureDialect(options.key ?? azureBatchFakeKey, options.deployment ?? azureBatchFakeDeployment, azureBatchFakeApiVersion),
    (server) => server
  )

/** A gateway's configuration for a fake: a model `model` with one provider `p`, and the environment that holds its key. */
export interface FakeBatchGatewayConfig {
  readonly toml: string
  readonly env: Readonly<Record<string, string>>
}

export const openAiBatchKeyVariable = "OPENAI_BATCH_FAKE_KEY"
export const azureBatchKeyVariable = "AZURE_BATCH_FAKE_KEY"

/** `api_type = "responses"` sends Responses API lines (`/v1/responses`) */
export const openAiBatchGatewayConfig = (
  fake: { readonly url: string },
  options: { readonly model?: string; readonly apiType?: "chat_completions" | "responses" } = {}
): FakeBatchGatewayConfig => {
  const model = options.model ?? "batch_model"
  return {
    toml: `
[models.${model}]
routing = ["p"]
[models.${model}.providers.p]
type = "openai"
model_name = "${openAiBatchFakeModel}"
api_base = "${fake.url}"
api_key_location = "env::${openAiBatchKeyVariable}"
${options.apiType === undefined ? "" : `api_type = "${options.apiType}"`}
`,
    env: { [openAiBatchKeyVariable]: openAiBatchFakeKey }
  }
}

export const azureBatchGatewayConfig = (fake: { readonly url: string }, options: { readonly model?: string } = {}): FakeBatchGatewayConfig => {
  const model = options.model ?? "batch_model"
  return {
    toml: `
[models.${model}]
routing = ["p"]
[models.${model}.providers.p]
type = "azure"
endpoint = "${fake.url}"
deployment_id = "${azureBatchFakeDeployment}"
api_key_location = "env::${azureBatchKeyVariable}"
`,
    env: { [azureBatchKeyVariable]: azureBatchFakeKey }
  }
}
