/**
 * A local server that speaks Anthropic's Message Batches API
 * (https://docs.anthropic.com/en/api/creating-message-batches), steered by the knobs of
 * `FakeBatchProvider`:
 * - `POST /v1/messages/batches` with `{requests: [{custom_id, params}]}` answers a
 *   `message_batch` object `in_progress` (400 for a body the API refuses: custom ids not
 *   unique or not matching `^[a-zA-Z0-9_-]{1,64}$`, params without `model` or `max_tokens`);
 * - `GET /v1/messages/batches/<id>` answers the batch, `in_progress` (`canceling` on the last
 *   such answer of a batch being cancelled) until its polls are used up, then `ended` with
 *   its `request_counts`, `ended_at` and `results_url`;
 * - `GET /v1/messages/batches/<id>/results` answers JSON Lines (`application/x-jsonl`, as an
 *   attachment), one `{custom_id, result}` per request, in reverse order (Anthropic does not
 *   keep the requests' order).
 * Every endpoint checks `x-api-key` (401 `authentication_error` otherwise) and
 * `anthropic-version`; errors have Anthropic's shape `{type: "error", error: {type, message}}`.
 *
 * How a batch ends (`ending`): Anthropic has no failed batch, so `fail` ends with every
 * request errored with the same `invalid_request_error`; `expire` and `cancel` leave the odd
 * requests `expired` or `canceled`; `partial` errors them.
 */
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { defaultAnswer, type FakeBatchEnding, type FakeBatchProvider } from "./fakeBatch.ts"

type Json = Record<string, any>

export const anthropicBatchVersion = "2023-06-01"

/** the message of every request of a batch whose `ending` is `fail` */
export const refusedBatchMessage = "model: claude-retired-1 is not available in the Message Batches API"
/** the message of each odd request of a `partial` batch */
export const partialErrorMessage = "prompt is too long: 215000 tokens > 200000 maximum"

export interface FakeAnthropicBatch extends FakeBatchProvider {
  /** `http://127.0.0.1:<port>`: `url` is `<origin>/v1/`, the `api_base` of an `anthropic` provider */
  readonly origin: string
  /** the key it takes in `x-api-key` */
  readonly apiKey: string
}

interface Batch {
  readonly id: string
  readonly requests: ReadonlyArray<{ readonly id: string; readonly body: any }>
  readonly ending: FakeBatchEnding
  pollsLeft: number
  readonly createdAt: Date
  endedAt: Date | undefined
  cancelInitiatedAt: Date | undefined
  inFlightPolls: number
}

type Outcome = "succeeded" | "errored" | "canceled" | "expired"

const outcomeOf = (ending: FakeBatchEnding, index: number): Outcome => {
  const odd = index % 2 === 1
  switch (ending) {
    case "complete":
      return "succeeded"
    case "fail":
      return "errored"
    case "expire":
      return odd ? "expired" : "succeeded"
    case "partial":
      return odd ? "errored" : "succeeded"
    case "cancel":
      return odd ? "canceled" : "succeeded"
  }
}

/** Anthropic's ids: a prefix and 24 base62 characters */
const anthropicId = (prefix: string): string => {
  const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
  return `${prefix}_01${[...randomBytes(22)].map((byte) => alphabet[byte % alphabet.length]).join("")}`
}

/** the first user text of a Messages body (string content or text blocks) */
export const firstUserText = (params: any): string | undefined => {
  const user = (params?.messages ?? []).find((message: Json) => message.role === "user")
  if (typeof user?.content === "string") return user.content
  return (Array.isArray(user?.content) ? user.content : []).find((block: Json) => block.type === "text")?.text
}

/** a Messages API answer as a batch's result carries it (`service_tier` is `batch`) */
export const batchMessage = (params: any, text: string): Json => ({
  id: anthropicId("msg"),
  type: "message",
  role: "assistant",
  model: params.model,
  content: [{ type: "text", text }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: {
    input_tokens: 20,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: text.split(" ").length,
    service_tier: "batch"
  }
})

const customIdPattern = /^[a-zA-Z0-9_-]{1,64}$/
const dayMs = 24 * 60 * 60 * 1000

export const startAnthropicBatchFake = async (options: { apiKey?: string } = {}): Promise<FakeAnthropicBatch> => {
  const apiKey = options.apiKey ?? "sk-ant-batch-fake-key"
  const batches = new Map<string, Batch>()
  const created: Array<{ id: string; requests: ReadonlyArray<{ id: string; body: any }> }> = []
  const requests: Array<{ method: string; path: string; headers: http.IncomingHttpHeaders }> = []
  let origin = ""
  let maxConcurrentPolls = 0

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json", "request-id": anthropicId("req") })
    res.end(JSON.stringify(body))
  }
  const error = (res: http.ServerResponse, status: number, type: string, message: string) =>
    send(res, status, { type: "error", error: { type, message }, request_id: anthropicId("req") })

  const counts = (batch: Batch): Json => {
    const tally: Json = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 }
    if (batch.endedAt === undefined) tally.processing = batch.requests.length
    else batch.requests.forEach((_, index) => tally[outcomeOf(batch.ending, index)]++)
    return tally
  }

  const batchObject = (batch: Batch): Json => ({
    id: batch.id,
    type: "message_batch",
    processing_status: batch.endedAt !== undefined ? "ended" : batch.cancelInitiatedAt !== undefined ? "canceling" : "in_progress",
    request_counts: counts(batch),
    ended_at: batch.endedAt?.toISOString() ?? null,
    created_at: batch.createdAt.toISOString(),
    expires_at: new Date(batch.createdAt.getTime() + dayMs).toISOString(),
    archived_at: null,
    cancel_initiated_at: batch.cancelInitiatedAt?.toISOString() ?? null,
    results_url: batch.endedAt !== undefined ? `${origin}/v1/messages/batches/${batch.id}/results` : null
  })

  const resultLine = (batch: Batch, index: number): Json => {
    const { id, body } = batch.requests[index]
    switch (outcomeOf(batch.ending, index)) {
      case "succeeded":
        return { custom_id: id, result: { type: "succeeded", message: batchMessage(body, fake.answer(id, body)) } }
      case "errored":
        return {
          custom_id: id,
          result: {
            type: "errored",
            error: {
              type: "error",
              error: { type: "invalid_request_error", message: batch.ending === "fail" ? refusedBatchMessage : partialErrorMessage },
              request_id: anthropicId("req")
            }
          }
        }
      case "canceled":
        return { custom_id: id, result: { type: "canceled" } }
      case "expired":
        return { custom_id: id, result: { type: "expired" } }
    }
  }

  /** why Anthropic refuses a creation body, or undefined */
  const refusal = (body: any): string | undefined => {
    if (!Array.isArray(body?.requests) || body.requests.length === 0) return "requests: List should have at least 1 item after validation, not 0"
    const seen = new Set<string>()
    for (const [index, request] of body.requests.entries()) {
      if (typeof request?.custom_id !== "string" || !customIdPattern.test(request.custom_id)) {
        return `requests.${index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`
      }
      if (seen.has(request.custom_id)) return `requests: custom_id ${request.custom_id} is not unique within the batch`
      seen.add(request.custom_id)
      if (typeof request.params?.model !== "string") return `requests.${index}.params.model: Field required`
      if (typeof request.params.max_tokens !== "number") return `requests.${index}.params.max_tokens: Field required`
      if (request.params.stream !== undefined) return `requests.${index}.params.stream: Extra inputs are not permitted`
    }
    return undefined
  }

  const create = (res: http.ServerResponse, text: string) => {
    if (fake.refuseCreation) return error(res, 500, "api_error", "Internal server error")
    let body: any
    try {
      body = JSON.parse(text)
    } catch {
      return error(res, 400, "invalid_request_error", "the body is not JSON")
    }
    const refused = refusal(body)
    if (refused !== undefined) return error(res, 400, "invalid_request_error", refused)
    const batch: Batch = {
      id: anthropicId("msgbatch"),
      requests: body.requests.map((request: Json) => ({ id: request.custom_id, body: request.params })),
      ending: fake.ending,
      pollsLeft: fake.pollsUntilDone,
      createdAt: new Date(),
      endedAt: undefined,
      cancelInitiatedAt: undefined,
      inFlightPolls: 0
    }
    batches.set(batch.id, batch)
    created.push({ id: batch.id, requests: batch.requests })
    send(res, 200, batchObject(batch))
  }

  const status = async (res: http.ServerResponse, batch: Batch) => {
    batch.inFlightPolls++
    maxConcurrentPolls = Math.max(maxConcurrentPolls, batch.inFlightPolls)
    if (fake.pollDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.pollDelayMs))
    batch.inFlightPolls--
    if (batch.endedAt === undefined) {
      if (batch.pollsLeft > 0) {
        batch.pollsLeft--
        // a batch being cancelled says `canceling` on its last answer before it ends
        if (batch.ending === "cancel" && batch.pollsLeft === 0) batch.cancelInitiatedAt = new Date()
      } else {
        if (batch.ending === "cancel") batch.cancelInitiatedAt ??= new Date()
        batch.endedAt = new Date()
      }
    }
    send(res, 200, batchObject(batch))
  }

  const results = (res: http.ServerResponse, batch: Batch) => {
    if (batch.endedAt === undefined) return error(res, 400, "invalid_request_error", `Batch ${batch.id} is still in_progress: results are available once it has ended`)
    const lines = batch.requests.map((_, index) => JSON.stringify(resultLine(batch, index))).reverse()
    res.writeHead(200, {
      "content-type": "application/x-jsonl",
      "content-disposition": `attachment; filename*=utf-8''${batch.id}_results.jsonl`,
      "request-id": anthropicId("req")
    })
    res.end(`${lines.join("\n")}\n`)
  }

  const route = (req: http.IncomingMessage, res: http.ServerResponse, text: string) => {
    const method = req.method ?? ""
    const path = (req.url ?? "").split("?")[0]
    if (req.headers["x-api-key"] !== apiKey) return error(res, 401, "authentication_error", "invalid x-api-key")
    if (req.headers["anthropic-version"] !== anthropicBatchVersion) return error(res, 400, "invalid_request_error", "anthropic-version: header is required")
    if (path === "/v1/messages/batches" && method === "POST") return create(res, text)
    const match = /^\/v1\/messages\/batches\/([^/]+)(\/results)?$/.exec(path)
    if (match === null || method !== "GET") return error(res, 404, "not_found_error", `Not found: ${method} ${path}`)
    if (fake.outage) return error(res, 503, "api_error", "Service Unavailable")
    const batch = batches.get(decodeURIComponent(match[1]))
    if (batch === undefined) return error(res, 404, "not_found_error", `message batch ${match[1]} not found`)
    return match[2] === undefined ? status(res, batch) : results(res, batch)
  }

  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part) => parts.push(part))
    req.on("end", () => {
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers })
      void route(req, res, Buffer.concat(parts).toString("utf8"))
    })
  })
  const sockets = new Set<import("node:net").Socket>()
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const defaults = () => ({
    ending: "complete" as FakeBatchEnding,
    pollsUntilDone: 1,
    outage: false,
    refuseCreation: false,
    answer: (_id: string, body: any) => defaultAnswer(firstUserText(body)),
    pollDelayMs: 0
  })
  const fake: FakeAnthropicBatch = {
    ...defaults(),
    url: `${origin}/v1/`,
    origin,
    apiKey,
    batches: created,
    requests,
    get maxConcurrentPolls() {
      return maxConcurrentPolls
    },
    reset: () => {
      Object.assign(fake, defaults())
      maxConcurrentPolls = 0
      batches.clear()
      created.length = 0
      requests.length = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
  return fake
}

/**
 * The configuration of a model `model` served by an `anthropic` provider `provider` on the
 * fake, its key read from the environment variable `keyEnv`; `env` sets that variable.
 */
export const anthropicBatchConfig = (
  fake: FakeAnthropicBatch,
  options: { readonly model?: string; readonly provider?: string; readonly keyEnv?: string; readonly modelName?: string } = {}
): { readonly toml: string; readonly keyEnv: string; readonly env: Readonly<Record<string, string>> } => {
  const model = options.model ?? "claude_batch"
  const provider = options.provider ?? "anthropic"
  const keyEnv = options.keyEnv ?? "TEST_ANTHROPIC_BATCH_KEY"
  const toml = `
[models.${model}]
routing = ["${provider}"]
[models.${model}.providers.${provider}]
type = "anthropic"
model_name = "${options.modelName ?? "claude-sonnet-4-5"}"
api_base = "${fake.url}"
api_key_location = "env::${keyEnv}"
`
  return { toml, keyEnv, env: { [keyEnv]: fake.apiKey } }
}
