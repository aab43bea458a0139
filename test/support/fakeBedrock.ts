/**
 * A local server that speaks AWS: Bedrock's Converse and ConverseStream, and SageMaker's
 * InvokeEndpoint and InvokeEndpointWithResponseStream with an OpenAI-compatible container
 * behind them. It checks authentication as AWS does: a SigV4 signature is recomputed from the
 * request as received (method, path, signed headers, body) with the secret it knows and
 * compared (403 otherwise, with AWS's message), a session token must match, and Bedrock takes
 * its API key as a bearer token. Streams are framed in AWS's binary event stream
 * (`@smithy/eventstream-codec`) and written in small pieces, so messages split across network
 * chunks. It answers the conformance scenarios (test/support/conformance.ts) by their marker, a
 * scripted answer when given, and a short text otherwise. Bedrock's CountTokens
 * (`/model/{id}/count-tokens`, `{"input": {"converse": ...}}`) refuses what a Converse count
 * does not take and answers `{"inputTokens": N}`: scripted, else `fakeConverseTokenCount`.
 */
import { Hash } from "@smithy/hash-node"
import { SignatureV4 } from "@smithy/signature-v4"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { encodeEvent } from "../../src/providers/aws/eventStream.ts"
import { chatToolResultLacking } from "./chatConformance.ts"
import { conformanceImage, conformanceToolResult, scenarioOf, toolResultAnswer } from "./conformance.ts"

export interface FakeAwsIdentity {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  /** when set, a signed request must carry it (`x-amz-security-token`, signed) */
  readonly sessionToken?: string | undefined
  /** a Bedrock API key, taken as `Authorization: Bearer <key>` */
  readonly bearerToken: string
  readonly region: string
}

export const fakeAwsIdentity: FakeAwsIdentity = {
  accessKeyId: "AKIAFAKEBEDROCK00001",
  secretAccessKey: "fake/secret+key/for-the-bedrock-fake-0001",
  bearerToken: "ABSKfakeBedrockApiKey0001",
  region: "us-east-1"
}

export interface AwsReceived {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
  /** `converse`, `converse-stream`, `count-tokens`, `invocations` or `invocations-response-stream` */
  readonly operation: string
  /** how it was authorized */
  readonly auth: "sigv4" | "bearer"
}

export type FakeBlock =
  | { readonly text: string }
  | { readonly toolUse: { readonly id: string; readonly name: string; readonly input: unknown } }
  | { readonly reasoning: { readonly text: string; readonly signature?: string } }
  | { readonly redacted: string }

/** A provider-neutral answer the fake renders in the wire format asked for. */
export interface FakeAnswer {
  readonly blocks: ReadonlyArray<FakeBlock>
  readonly stopReason?: string
  readonly usage?: { readonly input: number; readonly output: number; readonly cacheRead?: number }
}

export type FakeReply =
  | FakeAnswer
  | { readonly status: number; readonly message: string; readonly errorType?: string }
  /** a stream that sends these events, then an exception message */
  | { readonly blocks: ReadonlyArray<FakeBlock>; readonly exception: { readonly type: string; readonly message: string } }
  /** a token count's answer */
  | { readonly inputTokens: number }

export interface FakeAws {
  readonly url: string
  readonly requests: Array<AwsReceived>
  /** answers the next requests in order (after authentication); when empty, the scenarios or a short text */
  readonly script: Array<FakeReply>
  /** bytes per network write of a streamed answer */
  pieceBytes: number
  close(): Promise<void>
}

class FakeSha256 extends Hash {
  constructor(secret?: ConstructorParameters<typeof Hash>[1]) {
    super("sha256", secret)
  }
}

const single = (value: string | Array<string> | undefined): string | undefined => Array.isArray(value) ? value.join(",") : value

const sigV4Header =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/

const amzDate = (text: string): Date | undefined => {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text)
  return m === null ? undefined : new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]))
}

type AuthProblem = { readonly status: number; readonly type: string; readonly message: string }

/** AWS's checks of a signed request, in its words; undefined when it passes. */
const verifySigV4 = async (
  req: http.IncomingMessage,
  body: string,
  identity: FakeAwsIdentity,
  service: string
): Promise<AuthProblem | undefined> => {
  const authorization = single(req.headers.authorization) ?? ""
  const match = sigV4Header.exec(authorization)
  if (match === null) return { status: 403, type: "IncompleteSignatureException", message: `Authorization header requires 'Credential', 'Signature', 'SignedHeaders' parameters. Authorization=${authorization.slice(0, 40)}` }
  const [, accessKeyId, , region, scopeService, signedList, signature] = match
  if (accessKeyId !== identity.accessKeyId) return { status: 403, type: "UnrecognizedClientException", message: "The security token included in the request is invalid." }
  if (region !== identity.region) return { status: 403, type: "InvalidSignatureException", message: `Credential should be scoped to a valid region. ` }
  if (scopeService !== service) return { status: 403, type: "InvalidSignatureException", message: `Credential should be scoped to correct service: '${service}'. ` }
  const dateText = single(req.headers["x-amz-date"]) ?? ""
  const date = amzDate(dateText)
  if (date === undefined) return { status: 403, type: "IncompleteSignatureException", message: "Missing or invalid X-Amz-Date" }
  if (Math.abs(Date.now() - date.getTime()) > 15 * 60_000) return { status: 403, type: "InvalidSignatureException", message: "Signature expired" }
  const signedNames = signedList.split(";")
  for (const required of ["host", "x-amz-date", "content-type"]) {
    if (!signedNames.includes(required)) return { status: 403, type: "InvalidSignatureException", message: `header ${required} must be signed` }
  }
  const headers: Record<string, string> = {}
  for (const name of signedNames) {
    const value = single(req.headers[name])
    if (value === undefined) return { status: 403, type: "InvalidSignatureException", message: `signed header ${name} is missing` }
    headers[name] = value
  }
  const rawPath = req.url ?? "/"
  const queryAt = rawPath.indexOf("?")
  const query: Record<string, string> = {}
  if (queryAt >= 0) for (const [name, value] of new URLSearchParams(rawPath.slice(queryAt + 1))) query[name] = value
  const signer = new SignatureV4({
    credentials: { accessKeyId: identity.accessKeyId, secretAccessKey: identity.secretAccessKey, sessionToken: identity.sessionToken },
    region,
    service,
    sha256: FakeSha256
  })
  const expected = await signer.sign({
    method: req.method ?? "POST",
    protocol: "http:",
    hostname: headers.host ?? "",
    path: queryAt >= 0 ? rawPath.slice(0, queryAt) : rawPath,
    query,
    headers,
    body
  }, { signingDate: date })
  const expectedSignature = /Signature=([0-9a-f]{64})/.exec(String(expected.headers.authorization))?.[1]
  if (expectedSignature !== signature) {
    return {
      status: 403,
      type: "InvalidSignatureException",
      message: "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
    }
  }
  // temporary credentials: the session token must be the one issued with the keys, and signed
  const token = headers["x-amz-security-token"]
  if (token !== identity.sessionToken) {
    return { status: 403, type: "UnrecognizedClientException", message: "The security token included in the request is invalid." }
  }
  return undefined
}

// ---- the conformance scenarios, provider-neutral; each checks the request in its wire format

const textAnswer = (t: string): FakeAnswer => ({ blocks: [{ text: t }], stopReason: "end_turn", usage: { input: 10, output: 5 } })
const refuse = (what: string) => ({ status: 400, message: `conformance: ${what}`, errorType: "ValidationException" })

interface Wire {
  /** the tools offered: name -> parameters schema */
  readonly tools: (body: any) => Map<string, any>
  /** the forced tool's name, `auto`, `any`, or undefined */
  readonly choice: (body: any) => string | undefined
  /** where the schema of json_mode strict is found (the text that must mention it) */
  readonly strictSchema: (body: any) => unknown
  readonly imageData: (body: any) => ReadonlyArray<string>
  /** the call call_1 sent back and the tool's result tied to it: what is missing, if anything */
  readonly toolResult: (body: any) => string | undefined
  /** the signatures of thoughts sent back; undefined when the format cannot send them */
  readonly signatures: ((body: any) => ReadonlyArray<string>) | undefined
}

const conformanceReply = (body: any, wire: Wire): FakeReply | undefined => {
  const scenario = scenarioOf(body)
  switch (scenario) {
    case undefined:
      return undefined
    case "text":
    case "stream":
      return textAnswer("conformance text")
    case "tool_call":
    case "parallel_tool_calls":
    case "streamed_tool_calls": {
      const tools = wire.tools(body)
      if (!tools.has("get_weather") || (tools.get("get_weather") as any)?.properties?.city === undefined) return refuse("tool get_weather missing")
      if (wire.choice(body) !== "auto") return refuse(`tool choice auto expected, got ${wire.choice(body)}`)
      const calls: Array<FakeBlock> = [{ toolUse: { id: "call_1", name: "get_weather", input: { city: "Paris" } } }]
      if (scenario !== "tool_call") calls.push({ toolUse: { id: "call_2", name: "get_weather", input: { city: "London" } } })
      return { blocks: calls, stopReason: "tool_use", usage: { input: 20, output: 9 } }
    }
    case "json_strict": {
      const schema = JSON.stringify(wire.strictSchema(body) ?? "")
      if (!schema.includes("answer")) return refuse("the output schema did not arrive")
      return textAnswer(`{"answer":"conformance"}`)
    }
    case "json_tool":
      if (!wire.tools(body).has("respond") || wire.choice(body) !== "respond") return refuse("the respond tool is not offered and forced")
      return { blocks: [{ toolUse: { id: "call_respond", name: "respond", input: { answer: "conformance" } } }], stopReason: "tool_use", usage: { input: 20, output: 9 } }
    case "image":
      return wire.imageData(body).includes(conformanceImage.data) ? textAnswer("image received") : refuse("the image did not arrive")
    case "thought_round_trip":
      return {
        blocks: [{ reasoning: { text: "thinking", signature: "sig-conformance" } }, { text: "first" }],
        stopReason: "end_turn",
        usage: { input: 10, output: 5 }
      }
    case "thought_round_trip_2":
      if (wire.signatures !== undefined && !wire.signatures(body).includes("sig-conformance")) return refuse("the thought's signature was not sent back")
      return textAnswer("second")
    case "tool_result": {
      const lacking = wire.toolResult(body)
      return lacking === undefined ? textAnswer(toolResultAnswer) : refuse(lacking)
    }
    case "error":
      return refuse("prompt is too long")
    case "usage":
      // Bedrock counts cache reads apart from inputTokens: 8 + 3 = 11 input tokens
      return { blocks: [{ text: "conformance text" }], stopReason: "end_turn", usage: { input: 8, output: 7, cacheRead: 3 } }
  }
}

const converseWire: Wire = {
  tools: (body) =>
    new Map((body?.toolConfig?.tools ?? []).filter((t: any) => t?.toolSpec !== undefined).map((t: any) => [t.toolSpec.name, t.toolSpec.inputSchema?.json])),
  choice: (body) => {
    const choice = body?.toolConfig?.toolChoice
    return choice?.tool?.name ?? (choice?.auto !== undefined ? "auto" : choice?.any !== undefined ? "any" : undefined)
  },
  strictSchema: (body) => body?.system,
  imageData: (body) =>
    (body?.messages ?? []).flatMap((m: any) => m.content ?? []).filter((b: any) => b?.image !== undefined).map((b: any) => b.image.source?.bytes),
  toolResult: (body) => {
    const blocks = (role: string): Array<any> => (body?.messages ?? []).filter((m: any) => m.role === role).flatMap((m: any) => m.content ?? [])
    if (!blocks("assistant").some((b) => b?.toolUse?.toolUseId === "call_1")) return "the toolUse call_1 was not sent back"
    const result = blocks("user").find((b) => b?.toolResult?.toolUseId === "call_1")
    return result !== undefined && JSON.stringify(result.toolResult.content).includes(conformanceToolResult) ? undefined : "the toolResult of call_1 is missing"
  },
  signatures: (body) =>
    (body?.messages ?? []).filter((m: any) => m.role === "assistant").flatMap((m: any) => m.content ?? [])
      .map((b: any) => b?.reasoningContent?.reasoningText?.signature).filter((s: unknown) => typeof s === "string")
}

const chatWire: Wire = {
  tools: (body) => new Map((body?.tools ?? []).map((t: any) => [t?.function?.name, t?.function?.parameters])),
  choice: (body) => typeof body?.tool_choice === "string" ? body.tool_choice : body?.tool_choice?.function?.name,
  strictSchema: (body) => body?.response_format?.json_schema?.schema,
  imageData: (body) =>
    (body?.messages ?? []).flatMap((m: any) => Array.isArray(m.content) ? m.content : [])
      .filter((p: any) => p?.type === "image_url").map((p: any) => String(p.image_url?.url ?? "").replace(/^data:[^,]*,/, "")),
  toolResult: (body) => chatToolResultLacking(body),
  // Chat Completions cannot send thoughts back
  signatures: undefined
}

// ---- Converse rendering

const padding = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

const converseContent = (block: FakeBlock): unknown => {
  if ("text" in block) return { text: block.text }
  if ("toolUse" in block) return { toolUse: { toolUseId: block.toolUse.id, name: block.toolUse.name, input: block.toolUse.input } }
  if ("reasoning" in block) return { reasoningContent: { reasoningText: block.reasoning } }
  return { reasoningContent: { redactedContent: block.redacted } }
}

const converseUsage = (usage: FakeAnswer["usage"]) => {
  const u = usage ?? { input: 10, output: 5 }
  return {
    inputTokens: u.input,
    outputTokens: u.output,
    totalTokens: u.input + u.output + (u.cacheRead ?? 0),
    ...(u.cacheRead === undefined ? {} : { cacheReadInputTokens: u.cacheRead, cacheWriteInputTokens: 0 })
  }
}

const converseWhole = (answer: FakeAnswer) => ({
  output: { message: { role: "assistant", content: answer.blocks.map(converseContent) } },
  stopReason: answer.stopReason ?? "end_turn",
  usage: converseUsage(answer.usage),
  metrics: { latencyMs: 42 }
})

const halves = (s: string): Array<string> => s.length < 2 ? [s] : [s.slice(0, Math.ceil(s.length / 2)), s.slice(Math.ceil(s.length / 2))]

/** ConverseStream's events for the blocks, as AWS sends them (each payload padded with `p`, as AWS does). */
const converseEvents = (blocks: ReadonlyArray<FakeBlock>): Array<{ eventType: string; payload: object }> => {
  const events: Array<{ eventType: string; payload: object }> = [{ eventType: "messageStart", payload: { role: "assistant" } }]
  blocks.forEach((block, contentBlockIndex) => {
    const delta = (d: object) => events.push({ eventType: "contentBlockDelta", payload: { contentBlockIndex, delta: d } })
    if ("text" in block) for (const piece of halves(block.text)) delta({ text: piece })
    else if ("toolUse" in block) {
      events.push({
        eventType: "contentBlockStart",
        payload: { contentBlockIndex, start: { toolUse: { toolUseId: block.toolUse.id, name: block.toolUse.name } } }
      })
      for (const piece of halves(JSON.stringify(block.toolUse.input))) delta({ toolUse: { input: piece } })
    } else if ("reasoning" in block) {
      for (const piece of halves(block.reasoning.text)) delta({ reasoningContent: { text: piece } })
      if (block.reasoning.signature !== undefined) delta({ reasoningContent: { signature: block.reasoning.signature } })
    } else delta({ reasoningContent: { redactedContent: block.redacted } })
    events.push({ eventType: "contentBlockStop", payload: { contentBlockIndex } })
  })
  return events
}

const converseStream = (answer: FakeAnswer): Array<Uint8Array> =>
  [
    ...converseEvents(answer.blocks),
    { eventType: "messageStop", payload: { stopReason: answer.stopReason ?? "end_turn" } },
    { eventType: "metadata", payload: { usage: converseUsage(answer.usage), metrics: { latencyMs: 42 } } }
  ].map((event, i) => encodeEvent({ eventType: event.eventType, payload: JSON.stringify({ ...event.payload, p: padding.slice(0, 5 + i) }) }))

// ---- the OpenAI-compatible container behind SageMaker

const chatFinish = (stopReason: string | undefined) =>
  stopReason === "tool_use" ? "tool_calls" : stopReason === "max_tokens" ? "length" : "stop"

const chatWhole = (answer: FakeAnswer) => {
  const message: Record<string, unknown> = { role: "assistant", content: null }
  const texts = answer.blocks.flatMap((b) => "text" in b ? [b.text] : [])
  if (texts.length > 0) message.content = texts.join("")
  const reasoning = answer.blocks.flatMap((b) => "reasoning" in b ? [b.reasoning.text] : [])
  if (reasoning.length > 0) message.reasoning_content = reasoning.join("")
  const calls = answer.blocks.flatMap((b) => "toolUse" in b ? [b.toolUse] : [])
  if (calls.length > 0) {
    message.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.input) } }))
  }
  const u = answer.usage ?? { input: 10, output: 5 }
  return {
    id: "chatcmpl-sagemaker",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "container-model",
    choices: [{ index: 0, message, finish_reason: chatFinish(answer.stopReason) }],
    usage: { prompt_tokens: u.input + (u.cacheRead ?? 0), completion_tokens: u.output, total_tokens: u.input + (u.cacheRead ?? 0) + u.output }
  }
}

/** the container's SSE for the answer */
const chatSse = (answer: FakeAnswer): string => {
  const chunk = (delta: object, finish: string | null = null) => ({
    id: "c",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }]
  })
  const chunks: Array<object> = [chunk({ role: "assistant", content: "" })]
  let toolIndex = 0
  for (const block of answer.blocks) {
    if ("text" in block) for (const piece of halves(block.text)) chunks.push(chunk({ content: piece }))
    else if ("reasoning" in block) chunks.push(chunk({ reasoning_content: block.reasoning.text }))
    else if ("toolUse" in block) {
      const index = toolIndex++
      chunks.push(chunk({ tool_calls: [{ index, id: block.toolUse.id, type: "function", function: { name: block.toolUse.name, arguments: "" } }] }))
      for (const piece of halves(JSON.stringify(block.toolUse.input))) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
    }
  }
  chunks.push(chunk({}, chatFinish(answer.stopReason)))
  const u = answer.usage ?? { input: 10, output: 5 }
  chunks.push({ id: "c", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: u.input + (u.cacheRead ?? 0), completion_tokens: u.output } })
  return `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`
}

/** the container's stream as SageMaker relays it: `PayloadPart` events whose payload is the raw bytes, cut every `size` bytes */
const payloadParts = (sse: string, size: number): Array<Uint8Array> => {
  const bytes = Buffer.from(sse)
  const events: Array<Uint8Array> = []
  for (let at = 0; at < bytes.length; at += size) events.push(encodeEvent({ eventType: "PayloadPart", payload: bytes.subarray(at, at + size) }))
  return events
}

// ---- token counts

/** the fields of a `ConverseTokensRequest`: anything else (`inferenceConfig`) is refused */
const countedFields = new Set(["messages", "system", "toolConfig", "additionalModelRequestFields"])

/** the fake's count of a Converse count: a token per 4 characters (rounded up) of its texts (system, messages, tool results) and of its tools' JSON */
export const fakeConverseTokenCount = (converse: any): number => {
  let chars = 0
  const add = (blocks: unknown) => {
    if (!Array.isArray(blocks)) return
    for (const block of blocks) {
      if (typeof block?.text === "string") chars += block.text.length
      add(block?.toolResult?.content)
    }
  }
  add(converse.system)
  for (const message of converse.messages ?? []) add(message.content)
  if (converse.toolConfig !== undefined) chars += JSON.stringify(converse.toolConfig.tools ?? []).length
  return Math.ceil(chars / 4)
}

// ---- the server

const operations = /^\/(model|endpoints)\/([^/]+)\/(converse|converse-stream|count-tokens|invocations|invocations-response-stream)$/

export const startFakeBedrock = async (identity: FakeAwsIdentity = fakeAwsIdentity): Promise<FakeAws> => {
  const requests: Array<AwsReceived> = []
  const script: Array<FakeReply> = []
  const sockets = new Set<import("node:net").Socket>()
  const fake = { pieceBytes: 7 }

  const writeStream = (res: http.ServerResponse, messages: ReadonlyArray<Uint8Array>) => {
    res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "fake-request" })
    const all = Buffer.concat(messages)
    const size = fake.pieceBytes
    let at = 0
    const next = () => {
      if (res.destroyed) return
      if (at >= all.length) return res.end()
      res.write(all.subarray(at, at + size))
      at += size
      setImmediate(next)
    }
    next()
  }

  const sendError = (res: http.ServerResponse, status: number, type: string, message: string) => {
    res.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` })
    res.end(JSON.stringify({ message }))
  }

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, text: string) => {
    const path = req.url ?? ""
    const route = operations.exec(path.split("?")[0])
    if (req.method !== "POST" || route === null) return sendError(res, 404, "UnknownOperationException", `no operation at ${req.method} ${path}`)
    const [, kind, , operation] = route
    const bedrock = kind === "model"
    const authorization = single(req.headers.authorization) ?? ""
    let auth: "sigv4" | "bearer"
    if (authorization.startsWith("Bearer ")) {
      if (!bedrock || authorization.slice(7) !== identity.bearerToken) {
        return sendError(res, 403, "AccessDeniedException", "Authentication failed: Please make sure your API Key is valid.")
      }
      auth = "bearer"
    } else {
      const problem = await verifySigV4(req, text, identity, bedrock ? "bedrock" : "sagemaker")
      if (problem !== undefined) return sendError(res, problem.status, problem.type, problem.message)
      auth = "sigv4"
    }
    let body: any
    try {
      body = JSON.parse(text)
    } catch {
      return sendError(res, 400, "SerializationException", "the request body is not JSON")
    }
    requests.push({ method: req.method, path, headers: req.headers, body, operation, auth })
    const counting = operation === "count-tokens"
    const converse = counting ? body?.input?.converse : body
    if (counting) {
      if (typeof converse !== "object" || converse === null) return sendError(res, 400, "ValidationException", "input: a converse or invokeModel input is required")
      const extra = Object.keys(converse).find((field) => !countedFields.has(field))
      if (extra !== undefined) return sendError(res, 400, "ValidationException", `input.converse: unknown field ${extra}`)
    }
    if (bedrock) {
      // what Converse itself refuses
      const messages = converse?.messages
      if (!Array.isArray(messages) || messages.length === 0 || messages[0]?.role !== "user") {
        return sendError(res, 400, "ValidationException", "A conversation must start with a user message. Try again with a conversation that starts with a user message.")
      }
      for (let i = 1; i < messages.length; i++) {
        if (messages[i].role === messages[i - 1].role) {
          return sendError(res, 400, "ValidationException", "A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.")
        }
      }
    }
    const reply = script.shift() ?? (counting ? { inputTokens: fakeConverseTokenCount(converse) } : undefined) ??
      conformanceReply(body, bedrock ? converseWire : chatWire) ?? textAnswer(bedrock ? "Hello from fake Bedrock" : "Hello from fake SageMaker")
    const streamed = operation.endsWith("stream")
    if ("inputTokens" in reply) {
      if (!counting) return sendError(res, 500, "InternalServerException", "fake: a count was scripted, an answer was asked")
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(JSON.stringify({ inputTokens: reply.inputTokens }))
    }
    if (counting && !("status" in reply)) return sendError(res, 500, "InternalServerException", "fake: an answer was scripted, a count was asked")
    if ("status" in reply) {
      if (bedrock) return sendError(res, reply.status, reply.errorType ?? "ValidationException", reply.message)
      // SageMaker relays a container's error as a ModelError (424) holding the container's status and body
      const original = JSON.stringify({ error: { message: reply.message, type: "invalid_request_error" } })
      res.writeHead(424, { "content-type": "application/json", "x-amzn-errortype": "ModelError:http://internal.amazon.com/coral/com.amazon.sagemaker/" })
      return res.end(JSON.stringify({
        ErrorCode: "CLIENT_ERROR_FROM_MODEL",
        LogStreamArn: "arn:aws:logs:us-east-1:000000000000:log-group:/aws/sagemaker/Endpoints/fake",
        Message: `Received client error (${reply.status}) from primary with message "${original}". See logs for more information.`,
        OriginalMessage: original,
        OriginalStatusCode: reply.status
      }))
    }
    if ("exception" in reply) {
      const events = bedrock
        ? converseEvents(reply.blocks).map((e) => encodeEvent({ eventType: e.eventType, payload: JSON.stringify(e.payload) }))
        : payloadParts(chatSse({ blocks: reply.blocks }).split("data: [DONE]")[0], 9).slice(0, -1)
      return writeStream(res, [...events, encodeEvent({ messageType: "exception", eventType: reply.exception.type, payload: JSON.stringify({ message: reply.exception.message }) })])
    }
    if (bedrock) {
      if (streamed) return writeStream(res, converseStream(reply))
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(JSON.stringify(converseWhole(reply)))
    }
    if (streamed) return writeStream(res, payloadParts(chatSse(reply), 11))
    res.writeHead(200, { "content-type": "application/json", "x-amzn-invoked-production-variant": "AllTraffic" })
    res.end(JSON.stringify(chatWhole(reply)))
  }

  const server = http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (part) => parts.push(part))
    req.on("end", () => {
      handle(req, res, Buffer.concat(parts).toString("utf8")).catch((error) => {
        if (!res.headersSent) sendError(res, 500, "InternalServerException", String(error))
      })
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    requests,
    script,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  })
}
