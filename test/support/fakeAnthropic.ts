/**
 * A local server that speaks Anthropic's Messages API, for integration and conformance tests:
 * - `POST /v1/messages` checks `x-api-key` and `anthropic-version` (401 in Anthropic's error
 *   format otherwise) and answers a message, or its Server-Sent Events (`event: <type>` and
 *   `data: <json>`, as Anthropic frames them) when the body asks for a stream;
 * - Vertex AI: `POST /v1/projects/<P>/locations/<L>/publishers/anthropic/models/<M>:rawPredict`
 *   (`:streamRawPredict`) checks `Authorization: Bearer <token>` against the tokens its token
 *   endpoint issued and unexpired (401 in Google's format otherwise), and that the body has
 *   Vertex's `anthropic_version` and no `model`;
 * - token counts: `POST /v1/messages/count_tokens` (with the checks of `/v1/messages`) and
 *   Vertex's `.../publishers/anthropic/models/count-tokens:rawPredict` (its token, and the
 *   model in the body) refuse what a count does not take (`max_tokens`, `stream`, sampling) as
 *   Anthropic does, and answer `{"input_tokens": N}`: scripted, else `fakeTokenCount` of the body;
 * - `POST /token`: the OAuth2 JWT bearer grant of a service account; it checks the assertion's
 *   RS256 signature with the account's public key and its claims (iss, aud, scope, exp).
 * It records every request and answers from a script (a scripted answer may wait first), else
 * its `fallback` (an answer made from the request, for a client whose requests are not known
 * in advance), else the conformance scenario named in the request (test/support/conformance.ts),
 * else a short text; it counts the requests whose client hung up before the answer was whole.
 */
import type { KeyObject } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { jwtVerify } from "jose"
import { conformanceImage, conformanceToolResult, scenarioOf, toolResultAnswer } from "./conformance.ts"
import { serviceAccountJson, serviceAccountKeys } from "./serviceAccount.ts"

export interface AnthropicRequest {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

type Json = Record<string, any>

/** How to answer one request. */
export type AnthropicReply =
  /** a message (as it is), whole or, when the request asks for a stream, as its events */
  | { readonly kind: "message"; readonly body: Json }
  /** these events as SSE, whatever the request */
  | { readonly kind: "events"; readonly events: ReadonlyArray<Json> }
  | { readonly kind: "error"; readonly status: number; readonly type: string; readonly message: string }
  | { readonly kind: "raw"; readonly status: number; readonly body: string; readonly contentType: string }
  /** a token count's answer */
  | { readonly kind: "count"; readonly inputTokens: number }

/**
 * An answer of the script, sent `delayMs` after the request came (a provider slow to start); a
 * streamed message stalls `stallMs` after its first content delta (a provider pausing).
 */
export type ScriptedReply = AnthropicReply & { readonly delayMs?: number; readonly stallMs?: number }

export const anthropicVersionHeader = "2023-06-01"

/** `[models."<model>"]`, answered by one `anthropic` provider at `apiBase` as `modelName`, with the credential `keyLocation` */
export const anthropicModelToml = (model: string, modelName: string, apiBase: string, keyLocation: string) => `
[models."${model}"]
routing = ["anthropic"]
[models."${model}".providers.anthropic]
type = "anthropic"
model_name = "${modelName}"
api_base = "${apiBase}"
api_key_location = "${keyLocation}"
`

export const message = (
  content: ReadonlyArray<Json>,
  options: { stopReason?: string; usage?: Json } = {}
): Json => ({
  id: "msg_fake01",
  type: "message",
  role: "assistant",
  model: "claude-fake",
  content,
  stop_reason: options.stopReason ?? (content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn"),
  stop_sequence: null,
  usage: options.usage ?? { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 7 }
})

export const textMessage = (text: string, usage?: Json) => message([{ type: "text", text }], usage === undefined ? {} : { usage })

/** Cuts a text in two (the conformance stream wants at least two deltas). */
const halves = (text: string): ReadonlyArray<string> => text.length < 2 ? [text] : [text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))]

/** A message as the events Anthropic streams for it. */
export const messageEvents = (body: Json): ReadonlyArray<Json> => {
  const { content, usage, stop_reason, stop_sequence, ...head } = body
  const events: Array<Json> = [
    { type: "message_start", message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } },
    { type: "ping" }
  ]
  content.forEach((block: Json, index: number) => {
    switch (block.type) {
      case "text":
        events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } })
        for (const text of halves(block.text)) events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } })
        break
      case "thinking":
        events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } })
        events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } })
        events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } })
        break
      case "tool_use":
        events.push({ type: "content_block_start", index, content_block: { ...block, input: {} } })
        for (const partial_json of halves(JSON.stringify(block.input))) {
          events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } })
        }
        break
      default:
        events.push({ type: "content_block_start", index, content_block: block })
    }
    events.push({ type: "content_block_stop", index })
  })
  events.push({ type: "message_delta", delta: { stop_reason, stop_sequence }, usage: { output_tokens: usage.output_tokens } })
  events.push({ type: "message_stop" })
  return events
}

/**
 * The fake's token count of a count request: a token per 4 characters (rounded up) of its texts
 * (system, text blocks, tool results) and of its tools' JSON.
 */
export const fakeTokenCount = (body: Json): number => {
  let chars = 0
  const add = (content: unknown) => {
    if (typeof content === "string") chars += content.length
    else if (Array.isArray(content)) {
      for (const block of content) {
        if (typeof block?.text === "string") chars += block.text.length
        if (block?.type === "tool_result") add(block.content)
      }
    }
  }
  add(body.system)
  for (const message of body.messages ?? []) add(message.content)
  if (body.tools !== undefined) chars += JSON.stringify(body.tools).length
  return Math.ceil(chars / 4)
}

/** what Anthropic's count_tokens refuses ("Extra inputs are not permitted"): what only a run takes */
const uncounted = ["max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "service_tier"]

const sseOf = (events: ReadonlyArray<Json>) => events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("")

const refuse = (what: string): AnthropicReply => ({ kind: "error", status: 400, type: "invalid_request_error", message: `conformance: ${what}` })

const userBlocks = (body: Json): Array<Json> =>
  (body.messages ?? []).filter((m: Json) => m.role === "user").flatMap((m: Json) => (Array.isArray(m.content) ? m.content : []))

/** The answer of a conformance scenario, after checking the request carries what the scenario needs. */
export const conformanceReply = (body: Json): AnthropicReply | undefined => {
  const scenario = scenarioOf(body)
  const tools: Array<Json> = body.tools ?? []
  const weatherOffered = () => tools.some((tool) => tool.name === "get_weather" && tool.input_schema?.properties?.city !== undefined)
  const weather = (id: string, city: string) => ({ type: "tool_use", id, name: "get_weather", input: { city } })
  switch (scenario) {
    case undefined:
      return undefined
    case "text":
    case "stream":
      if (scenario === "stream" && body.stream !== true) return refuse("a streamed request was expected")
      return { kind: "message", body: textMessage("conformance text") }
    case "tool_call":
      if (!weatherOffered()) return refuse("the tool get_weather is missing from tools")
      if (body.tool_choice !== undefined && body.tool_choice.type !== "auto") return refuse("tool_choice auto was expected")
      return { kind: "message", body: message([weather("call_1", "Paris")]) }
    case "parallel_tool_calls":
    case "streamed_tool_calls":
      if (!weatherOffered()) return refuse("the tool get_weather is missing from tools")
      if (scenario === "streamed_tool_calls" && body.stream !== true) return refuse("a streamed request was expected")
      return { kind: "message", body: message([weather("call_1", "Paris"), weather("call_2", "London")]) }
    case "json_strict":
      if (body.output_config?.format?.type !== "json_schema" || body.output_config.format.schema?.properties?.answer === undefined) {
        return refuse("the output schema is missing from output_config.format")
      }
      return { kind: "message", body: textMessage("{\"answer\":\"conformance\"}") }
    case "json_tool":
      if (!tools.some((tool) => tool.name === "respond") || body.tool_choice?.type !== "tool" || body.tool_choice.name !== "respond") {
        return refuse("the respond tool is not offered and forced")
      }
      return { kind: "message", body: message([{ type: "tool_use", id: "toolu_respond", name: "respond", input: { answer: "conformance" } }]) }
    case "image": {
      const image = userBlocks(body).find((block) => block.type === "image")
      if (image?.source?.type !== "base64" || image.source.data !== conformanceImage.data || image.source.media_type !== conformanceImage.mimeType) {
        return refuse("the image is missing (a base64 image block was expected)")
      }
      return { kind: "message", body: textMessage("image received") }
    }
    case "thought_round_trip":
      return { kind: "message", body: message([{ type: "thinking", thinking: "thinking", signature: "sig-conformance" }, { type: "text", text: "first" }]) }
    case "thought_round_trip_2": {
      const sent = (body.messages ?? []).filter((m: Json) => m.role === "assistant").flatMap((m: Json) => m.content)
      if (!sent.some((block: Json) => block.type === "thinking" && block.signature === "sig-conformance")) {
        return refuse("the thinking block with its signature was not sent back")
      }
      return { kind: "message", body: textMessage("second") }
    }
    case "tool_result": {
      const called = (body.messages ?? []).filter((m: Json) => m.role === "assistant").flatMap((m: Json) => Array.isArray(m.content) ? m.content : [])
        .some((block: Json) => block.type === "tool_use" && block.id === "call_1" && block.name === "get_weather")
      if (!called) return refuse("the tool_use block call_1 was not sent back")
      const result = userBlocks(body).find((block) => block.type === "tool_result" && block.tool_use_id === "call_1")
      if (result === undefined || !JSON.stringify(result.content).includes(conformanceToolResult)) return refuse("the tool_result of call_1 is missing")
      return { kind: "message", body: textMessage(toolResultAnswer) }
    }
    case "error":
      return refuse("prompt is too long")
    case "usage":
      return {
        kind: "message",
        body: textMessage("conformance text", { input_tokens: 8, cache_creation_input_tokens: 0, cache_read_input_tokens: 3, output_tokens: 7 })
      }
  }
}

export interface ServiceAccountKey {
  /** the key file's JSON text */
  readonly json: string
  readonly clientEmail: string
}

export interface FakeAnthropic {
  readonly url: string
  /** the `api_base` of an `anthropic` provider: `<url>/v1/` */
  readonly apiBase: string
  /** the key it takes in `x-api-key` */
  readonly apiKey: string
  readonly requests: Array<AnthropicRequest>
  /** the token endpoint's requests (decoded JWT claims) */
  readonly tokenRequests: Array<{ readonly claims: Json }>
  readonly script: Array<ScriptedReply>
  /** answers a message request when the script is empty (undefined: the conformance scenario or the short text); `reset` removes it */
  fallback: ((request: AnthropicRequest) => ScriptedReply | undefined) | undefined
  /** requests whose client (the gateway) closed the connection before the answer was whole */
  abandoned: number
  /** the `expires_in` of the tokens issued next */
  tokenExpiresIn: number
  /** a service account whose token_uri is this server's, its key generated for this fake */
  readonly serviceAccount: ServiceAccountKey
  reset(): void
  close(): Promise<void>
}

const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
const vertexPath = /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/(publishers\/anthropic\/models|endpoints)\/([^/:]+):(rawPredict|streamRawPredict)$/

export const startFakeAnthropic = async (options: { apiKey?: string } = {}): Promise<FakeAnthropic> => {
  const apiKey = options.apiKey ?? "sk-ant-fake-key"
  const { privateKey, publicKey } = serviceAccountKeys()
  const requests: Array<AnthropicRequest> = []
  const tokenRequests: Array<{ claims: Json }> = []
  const script: Array<ScriptedReply> = []
  /** issued token -> expiry (epoch ms) */
  const tokens = new Map<string, number>()
  let url = ""
  const fake: Pick<FakeAnthropic, "tokenExpiresIn" | "abandoned" | "fallback"> = { tokenExpiresIn: 3600, abandoned: 0, fallback: undefined }

  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" })
    res.end(JSON.stringify(body))
  }
  const anthropicError = (res: http.ServerResponse, status: number, type: string, message: string) =>
    send(res, status, { type: "error", error: { type, message }, request_id: "req_fake" })

  const answer = (res: http.ServerResponse, reply: ScriptedReply, stream: boolean) => {
    switch (reply.kind) {
      case "error":
        return anthropicError(res, reply.status, reply.type, reply.message)
      case "raw":
        res.writeHead(reply.status, { "content-type": reply.contentType })
        return res.end(reply.body)
      case "message":
        if (!stream) return send(res, 200, reply.body)
        res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" })
        if (reply.stallMs === undefined) return res.end(sseOf(messageEvents(reply.body)))
        return stalled(res, messageEvents(reply.body), reply.stallMs)
      case "events":
        res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" })
        return res.end(sseOf(reply.events))
      case "count":
        return send(res, 200, { input_tokens: reply.inputTokens })
    }
  }

  const countAnswer = (res: http.ServerResponse, body: Json) => {
    const extra = uncounted.find((field) => body[field] !== undefined)
    if (extra !== undefined) return anthropicError(res, 400, "invalid_request_error", `${extra}: Extra inputs are not permitted`)
    const reply = script.shift() ?? { kind: "count", inputTokens: fakeTokenCount(body) }
    if (reply.kind === "message" || reply.kind === "events") return anthropicError(res, 500, "api_error", "fake: a message was scripted, a count was asked")
    answer(res, reply, false)
  }

  const stalled = (res: http.ServerResponse, events: ReadonlyArray<Json>, stallMs: number) => {
    const cut = events.findIndex((event) => event.type === "content_block_delta") + 1
    res.write(sseOf(events.slice(0, cut)))
    setTimeout(() => {
      if (!res.destroyed) res.end(sseOf(events.slice(cut)))
    }, stallMs)
  }

  const tokenEndpoint = async (text: string, res: http.ServerResponse) => {
    const form = new URLSearchParams(text)
    const oauthError = (description: string) => send(res, 400, { error: "invalid_grant", error_description: description })
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") return oauthError("grant_type must be the JWT bearer grant")
    try {
      const { payload } = await jwtVerify(form.get("assertion") ?? "", publicKey as KeyObject, {
        algorithms: ["RS256"],
        issuer: serviceAccount.clientEmail,
        audience: `${url}/token`
      })
      if (payload.scope !== cloudPlatformScope) return oauthError(`scope must be ${cloudPlatformScope}`)
      if (payload.exp === undefined || payload.iat === undefined) return oauthError("exp and iat are required")
      tokenRequests.push({ claims: payload })
      const token = `ya29.fake-token-${tokenRequests.length}`
      tokens.set(token, Date.now() + fake.tokenExpiresIn * 1000)
      send(res, 200, { access_token: token, expires_in: fake.tokenExpiresIn, token_type: "Bearer" })
    } catch (error) {
      oauthError(`Invalid JWT: ${(error as Error).message}`)
    }
  }

  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part) => parts.push(part))
    req.on("end", () => {
      const text = Buffer.concat(parts).toString("utf8")
      const path = req.url ?? ""
      if (path === "/token") return void tokenEndpoint(text, res)
      let body: any
      try {
        body = JSON.parse(text)
      } catch {
        return anthropicError(res, 400, "invalid_request_error", "the body is not JSON")
      }
      const received: AnthropicRequest = { path, headers: req.headers, body }
      requests.push(received)
      const vertex = vertexPath.exec(path)
      const counting = path === "/v1/messages/count_tokens" || (vertex !== null && vertex[1] !== "endpoints" && vertex[2] === "count-tokens")
      if (vertex !== null) {
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1]
        const expiry = token === undefined ? undefined : tokens.get(token)
        if (expiry === undefined || expiry < Date.now()) {
          return send(res, 401, {
            error: {
              code: 401,
              message: "Request had invalid authentication credentials. Expected OAuth 2 access token.",
              status: "UNAUTHENTICATED"
            }
          })
        }
        if (body.anthropic_version !== "vertex-2023-10-16") return anthropicError(res, 400, "invalid_request_error", "anthropic_version: vertex-2023-10-16 expected")
        // a count names its model in the body, an inference in the URL
        if (counting && typeof body.model !== "string") return anthropicError(res, 400, "invalid_request_error", "model: Field required")
        if (!counting && body.model !== undefined) return anthropicError(res, 400, "invalid_request_error", "model: Extra inputs are not permitted")
        if (counting && vertex[3] !== "rawPredict") return anthropicError(res, 404, "not_found_error", `Not found: ${path}`)
        if ((vertex[3] === "streamRawPredict") !== (body.stream === true)) {
          return anthropicError(res, 400, "invalid_request_error", "stream must be true on streamRawPredict only")
        }
      } else if (path === "/v1/messages" || counting) {
        if (req.headers["x-api-key"] !== apiKey) return anthropicError(res, 401, "authentication_error", "invalid x-api-key")
        if (req.headers["anthropic-version"] !== anthropicVersionHeader) {
          return anthropicError(res, 400, "invalid_request_error", "anthropic-version: header is required")
        }
        if (typeof body.model !== "string") return anthropicError(res, 400, "invalid_request_error", "model: Field required")
      } else {
        return anthropicError(res, 404, "not_found_error", `Not found: ${path}`)
      }
      if (counting) return countAnswer(res, body)
      if (typeof body.max_tokens !== "number") return anthropicError(res, 400, "invalid_request_error", "max_tokens: Field required")
      const reply: ScriptedReply = script.shift() ?? fake.fallback?.(received) ?? conformanceReply(body) ??
        { kind: "message", body: textMessage("Hello from fake Anthropic") }
      res.on("close", () => {
        if (!res.writableEnded) fake.abandoned++
      })
      if (reply.delayMs === undefined) return answer(res, reply, body.stream === true)
      setTimeout(() => {
        if (!res.destroyed) answer(res, reply, body.stream === true)
      }, reply.delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const clientEmail = "gateway-test@fake-project.iam.gserviceaccount.com"
  const serviceAccount: ServiceAccountKey = {
    clientEmail,
    json: serviceAccountJson(privateKey, { projectId: "fake-project", keyId: "fake-key-1", clientEmail, tokenUri: `${url}/token` })
  }
  return Object.assign(fake, {
    url,
    apiBase: `${url}/v1/`,
    apiKey,
    requests,
    tokenRequests,
    script,
    serviceAccount,
    reset: () => {
      requests.length = 0
      script.length = 0
      tokenRequests.length = 0
      fake.tokenExpiresIn = 3600
      fake.abandoned = 0
      fake.fallback = undefined
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  })
}
