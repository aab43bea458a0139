/**
 * The one driver of every wire codec (`codec.ts`). For one call to one provider it resolves the
 * credential, scopes the edits and the `provider_tools` to the call, has the codec build the
 * body, applies `extra_body` and `extra_headers`, sends it through the `HttpTransport`, checks the
 * status, cuts a stream into events by the codec's framing, has the codec read them, and maps
 * every failure to a `ProviderFailure` whose message carries no key. Written once: a codec only
 * translates. Timeouts and fallback between providers are the model call's (`modelCall.ts`).
 */
import type * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Credential } from "../config/credentials.ts"
import type { ProviderConfig } from "../config/types.ts"
import { itemsPerTurn, letIoRun } from "../eventLoop.ts"
import { InvalidRequest } from "../errors.ts"
import { unsendableCharacter } from "../httpHeaders.ts"
import {
  applyExtraBodyEdit,
  applyExtraHeaderEdits,
  type CallTarget,
  type ExtraBodyEdit,
  type ExtraHeaderEdit,
  requestFieldOf,
  type ScopedEdit,
  scopeMatches
} from "../inference/extraBody.ts"
import type { ModelRequest, OutputBlock, ProviderChunk, ProviderResponse } from "../inference/types.ts"
import { type ByteReader, type HttpCall, type HttpReply, type HttpStreamReply, HttpTransport, type TransportError } from "../transport.ts"
import {
  type Authorizer,
  type BatchDownload,
  type BatchExchange,
  type BatchExchangeRequest,
  type BatchHooks,
  type BatchItemResult,
  type CallerContext,
  type EmbeddingsHooks,
  type StreamEventParser,
  type StreamFraming,
  TextBody,
  type WireBody,
  maxResultLineBytes,
  unscopedProvider,
  type WireCodec,
  WireProblem
} from "./codec.ts"
import { lineCutter } from "./lines.ts"
import { redactSecrets } from "./redact.ts"
import { parseRetryAfter } from "./retryAfter.ts"
import { type BatchClient, type BatchPollCall, type BatchResult, type EmbeddingClient, type ProviderCall, type ProviderClient, type ProviderDefinition, type ProviderEmbeddings, type ChunkPull, type ProviderStream, qualifiedProviderName } from "./types.ts"
import { ProviderFailure } from "./failure.ts"

/**
 * A provider type from its codec. The configuration decodes a provider table's settings with
 * `settingsFields`; `make` checks them against the codec's Schema once, which types them. Only
 * a `<type>::<model>` short-hand (no table, no settings) can fail the check, for a type whose
 * settings are required (a self-hosted server's `api_base`): its calls then fail saying so.
 */
export const wireProvider = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>
): ProviderDefinition => {
  const isSettings = Schema.is(codec.settings)
  return {
    type: codec.type,
    defaultCredential: codec.defaultCredential,
    requiresModelName: codec.requiresModelName ?? true,
    settingsFields: codec.settings.fields,
    embeddings: codec.embeddings !== undefined,
    batch: codec.batch !== undefined,
    settingsProblem: codec.targetProblem === undefined ? undefined : (config) => {
      if (!isSettings(config.settings)) return undefined
      return codec.targetProblem?.(codec.target(config.settings, config.modelName, config.env ?? {}))
    },
    // a short-hand has no settings of its own: its model name alone says where its calls go
    modelNameProblem: codec.targetProblem === undefined || !isSettings({})
      ? undefined
      : (model) => codec.targetProblem?.(codec.target({} as Settings, model, {})),
    make: (config) =>
      isSettings(config.settings)
        ? wireClient(codec, codec.target(config.settings, config.modelName, config.env ?? {}))
        : failingClient(
          `provider "${config.name}" (type ${codec.type}) lacks the settings its type requires (${
            Object.keys(codec.settings.fields).join(", ")
          }): configure it in a [models.<name>.providers.<name>] table`
        )
  }
}

const failingClient = (message: string): ProviderClient => {
  const problem = new ProviderFailure({ message, timedOut: false })
  const failed = Effect.fail(problem)
  return {
    infer: () => failed,
    stream: () => failed,
    embeddings: { embed: () => failed, parse: () => problem },
    batch: { start: () => failed, poll: () => failed }
  }
}

/** The client of one configured provider: `target` is what its codec derived from the settings. */
export const wireClient = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  target: Target
): ProviderClient => {
  const authorize = codec.authorizer?.(target)
  const streamType = codec.framing.contentType
  return {
    infer: (call) => exchange(codec, authorize, call, wireRequest(codec, target, call, false), post, whole),
    stream: (call) =>
      exchange(codec, authorize, call, wireRequest(codec, target, call, true), (http, request) =>
        http.postStream(request, streamType), streamed),
    embeddings: codec.embeddings === undefined ? undefined : embeddingClient(codec, codec.embeddings, target, authorize),
    batch: codec.batch === undefined ? undefined : batchClient(codec, codec.batch, target, authorize)
  }
}

/**
 * Batches through the same path as inference: each request's body is built as for one call
 * (`extra_body` applied), and every exchange of the hooks gets the provider's headers, the
 * `extra_headers` edits, authorization and error mapping. A finished batch's answers are read
 * by the codec's `parseResponse`, as a single call's would be.
 */
/** a hook's own failures (beside the exchanges', already clean) carry no key either */
const redacted = <A, R>(effect: Effect.Effect<A, ProviderFailure, R>, apiKey: string | undefined) =>
  Effect.mapError(effect, (error) =>
    new ProviderFailure({
      message: redactSecrets(error.message, apiKey),
      timedOut: error.timedOut,
      status: error.status,
      retryAfterS: error.retryAfterS,
      unsupported: error.unsupported
    }))

/** a 2xx answer's text (a batch hook reads it itself) */
const textOf = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  reply: HttpReply,
  _request: HttpCall,
  apiKey: string | undefined
): Effect.Effect<string, ProviderFailure> =>
  reply.status >= 200 && reply.status < 300 ? Effect.succeed(reply.text) : failedReply(codec, reply, apiKey)

/** bytes of a downloaded file read between two turns of the event loop (its reads may come without one when the data waits) */
const bytesPerTurn = 1024 * 1024

/**
 * A downloaded file's lines handed to `each` as they arrive (a 2xx; any other status is the
 * provider's failure, as for an exchange), a read at a time: the file is never held whole.
 */
const linesTo = (each: (line: string | undefined, lineNumber: number) => ProviderFailure | undefined) =>
<Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  reply: HttpStreamReply,
  _request: HttpCall,
  apiKey: string | undefined
): Effect.Effect<void, ProviderFailure> => {
  if (!reply.ok) return failedReply(codec, reply, apiKey)
  const reader = reply.body
  return Effect.gen(function*() {
    const cutter = lineCutter(maxResultLineBytes)
    const lines: Array<string | undefined> = []
    let lineNumber = 0
    let sinceTurn = 0
    while (true) {
      const bytes = yield* Effect.mapError(reader.read, (error) => transportFailure(error, apiKey))
      if (bytes === undefined) cutter.end(lines)
      else cutter.feed(bytes, lines)
      for (const line of lines) {
        const stop = each(line, ++lineNumber)
        if (stop !== undefined) return yield* Effect.fail(stop)
      }
      lines.length = 0
      if (bytes === undefined) return
      sinceTurn += bytes.length
      if (sinceTurn >= bytesPerTurn) {
        sinceTurn = 0
        yield* letIoRun
      }
    }
  }).pipe(Effect.ensuring(reader.close))
}

const download = (http: Transport, request: HttpCall) => http.download(request)

const batchClient = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  hooks: BatchHooks<Target>,
  target: Target,
  authorize: Authorizer | undefined
): BatchClient => {
  const builtFor = (request: BatchExchangeRequest, call: BatchPollCall): HttpCall => {
    const body = request.body === undefined ? "" : request.body instanceof TextBody ? request.body.text : JSON.stringify(request.body)
    // the provider's JSON content type gives way to a text body's own, and a GET sends none
    const contentType: Array<ExtraHeaderEdit> = request.body instanceof TextBody
      ? [{ name: "content-type", value: request.body.contentType }]
      : request.body === undefined && request.method === "GET"
      ? [{ name: "content-type", delete: true }]
      : []
    const headers = applyExtraHeaderEdits(codec.headers(target, call.apiKey), [
      ...contentType,
      ...Object.entries(request.headers ?? {}).map(([name, value]) => ({ name, value })),
      ...call.extraHeaders
    ])
    return { url: request.url, headers, body, method: request.method, maxResponseBytes: request.maxResponseBytes }
  }
  // the hooks' programs run inside the caller's context: the transport is provided to each exchange;
  // what is sent is a request already, so the exchange fails with provider failures only
  const exchangeFor = (call: BatchPollCall): BatchExchange => (request) =>
    exchange(codec, authorize, call, builtFor(request, call), post, textOf) as unknown as Effect.Effect<string, ProviderFailure>
  const downloadFor = (call: BatchPollCall): BatchDownload => (request, each) =>
    exchange(codec, authorize, call, builtFor(request, call), download, linesTo(each)) as unknown as Effect.Effect<void, ProviderFailure>
  return {
    start: (calls) =>
      Effect.gen(function*() {
        if (calls.length === 0) return yield* Effect.fail(failure("a batch needs at least one request", undefined))
        const items: Array<{ id: string; body: WireBody }> = []
        const rawRequests: Array<string> = []
        for (let index = 0; index < calls.length; index++) {
          // tens of thousands of bodies: the requests in flight are served between slices
          if (index > 0 && index % itemsPerTurn === 0) yield* letIoRun
          const { id, call } = calls[index]
          const body = codec.body(call.request, {
            target,
            stream: false,
            qualifiedName: call.qualifiedName,
            providerTools: providerToolsFor(call),
            caller: call.caller ?? noCaller
          })
          if (body instanceof WireProblem) {
            return yield* Effect.fail(new ProviderFailure({ message: redactSecrets(body.message, call.apiKey), timedOut: false, unsupported: true }))
          }
          // the edits apply to `body` itself, and the text sent is its JSON
          const built = editedRequest("", {}, body, call)
          if (!isHttpCall(built)) return yield* Effect.fail(built)
          items.push({ id, body })
          rawRequests.push(built.body)
        }
        const first = calls[0].call
        const http = yield* HttpTransport
        const handle = yield* Effect.provideService(
          redacted(
            hooks.start(target, items, exchangeFor({ apiKey: first.apiKey, qualifiedName: first.qualifiedName, extraHeaders: first.extraHeaders })),
            first.apiKey
          ),
          HttpTransport,
          http
        )
        return { handle, rawRequests }
      }),
    poll: (handle, call) =>
      Effect.gen(function*() {
        const http = yield* HttpTransport
        const polled = yield* Effect.provideService(
          redacted(hooks.poll(target, handle, exchangeFor(call), downloadFor(call)), call.apiKey),
          HttpTransport,
          http
        )
        if (polled.status !== "completed") return polled
        const results: Array<BatchResult> = []
        for (let index = 0; index < polled.results.length; index++) {
          if (index > 0 && index % itemsPerTurn === 0) yield* letIoRun
          results.push(batchResult(codec, polled.results[index], call))
        }
        return { status: "completed" as const, results }
      })
  }
}

/** one request's result read as a single call's answer would be (`unknown` blocks scoped, nothing of the key left) */
const batchResult = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  result: BatchItemResult,
  call: BatchPollCall
): BatchResult => {
  if (!result.ok) return { id: result.id, ok: false, message: redactSecrets(result.message, call.apiKey) }
  const parsed = codec.parseResponse(result.body, call.qualifiedName)
  if (parsed instanceof WireProblem) return { id: result.id, ok: false, message: redactSecrets(parsed.message, call.apiKey) }
  return {
    id: result.id,
    ok: true,
    response: {
      output: scopeUnknownBlocks(parsed.output, call.qualifiedName),
      usage: parsed.usage,
      finishReason: parsed.finishReason,
      rawRequest: "",
      rawResponse: result.body
    }
  }
}

/** Embeddings through the same path as inference: credentials, edits, authorization, transport, error mapping. */
const embeddingClient = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  hooks: EmbeddingsHooks<Target>,
  target: Target,
  authorize: Authorizer | undefined
): EmbeddingClient => {
  const parse = (text: string, apiKey?: string | undefined) => {
    const parsed = hooks.parse(text)
    return parsed instanceof WireProblem ? failure(parsed.message, apiKey) : parsed
  }
  /** reads the answer to `inputCount` inputs */
  const readFor = (inputCount: number) => (
    _codec: WireCodec<Settings, Target, Event>,
    reply: HttpReply,
    request: HttpCall,
    apiKey: string | undefined
  ): Effect.Effect<ProviderEmbeddings, ProviderFailure> => {
    if (reply.status < 200 || reply.status >= 300) return failedReply(codec, reply, apiKey)
    const parsed = parse(reply.text, apiKey)
    if (parsed instanceof ProviderFailure) return Effect.fail(parsed)
    if (parsed.embeddings.length !== inputCount) {
      return Effect.fail(failure(`the provider answered ${parsed.embeddings.length} embeddings for ${inputCount} inputs`, apiKey))
    }
    return Effect.succeed({ ...parsed, rawRequest: request.body, rawResponse: reply.text })
  }
  return {
    embed: (call) => {
      const caller = call.caller ?? noCaller
      const built = editedRequest(
        hooks.url(target),
        codec.headers(target, call.apiKey),
        hooks.body(target, call.request, caller),
        ownEditsOf(codec, call, caller)
      )
      return exchange(codec, authorize, call, built, post, readFor(call.request.input.length))
    },
    parse
  }
}

type Transport = HttpTransport["Service"]

const post = (http: Transport, request: HttpCall) => http.post(request)

/** One call: the request as built, authorized when the codec says how, sent, and its reply read by `read`; the transport's failures mapped. */
const exchange = <Settings, Target, Event, Reply, A>(
  codec: WireCodec<Settings, Target, Event>,
  authorize: Authorizer | undefined,
  call: { readonly apiKey: string | undefined; readonly qualifiedName: string; readonly credentialFromRequest?: boolean | undefined },
  built: HttpCall | ProviderFailure | InvalidRequest,
  send: (http: Transport, request: HttpCall) => Effect.Effect<Reply, TransportError>,
  read: (
    codec: WireCodec<Settings, Target, Event>,
    reply: Reply,
    request: HttpCall,
    apiKey: string | undefined,
    qualifiedName: string
  ) => Effect.Effect<A, ProviderFailure>
): Effect.Effect<A, ProviderFailure | InvalidRequest, HttpTransport> => {
  if (!isHttpCall(built)) return Effect.fail(built)
  const apiKey = call.apiKey
  // a key the request gave goes into a header (unless an authorizer reads it: a key file): one it cannot carry is the request's fault
  const unsendable = authorize === undefined && call.credentialFromRequest === true && apiKey !== undefined ? unsendableCharacter(apiKey) : undefined
  if (unsendable !== undefined) {
    return Effect.fail(new InvalidRequest({ message: `credentials: the API key given holds ${unsendable}, which an HTTP header cannot carry` }))
  }
  const sendAndRead = (request: HttpCall) =>
    HttpTransport.use((http) => send(http, request)).pipe(
      Effect.mapError((error) => transportFailure(error, apiKey)),
      Effect.flatMap((reply) => read(codec, reply, request, apiKey, call.qualifiedName))
    )
  if (authorize === undefined) return sendAndRead(built)
  return authorize(built, apiKey, call.credentialFromRequest === true).pipe(
    // the request's fault (a credential it gave that the gateway will not use) ends the inference as it is
    Effect.mapError((error) => error instanceof InvalidRequest ? error : failure(error.message, apiKey, error.timedOut)),
    Effect.flatMap(sendAndRead)
  )
}

/** A whole answer: a 2xx the codec can read. */
const whole = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  reply: HttpReply,
  request: HttpCall,
  apiKey: string | undefined,
  qualifiedName: string
): Effect.Effect<ProviderResponse, ProviderFailure> => {
  if (reply.status < 200 || reply.status >= 300) return failedReply(codec, reply, apiKey)
  const parsed = codec.parseResponse(reply.text, qualifiedName)
  if (parsed instanceof WireProblem) return Effect.fail(failure(parsed.message, apiKey))
  return Effect.succeed({
    output: scopeUnknownBlocks(parsed.output, qualifiedName),
    usage: parsed.usage,
    finishReason: parsed.finishReason,
    rawRequest: request.body,
    rawResponse: reply.text
  })
}

/**
 * `unknown` output blocks name the provider that made them, so that they go back only to it: a
 * codec that reads them without the call's name leaves it empty, and it is filled here.
 */
const scopeUnknownBlocks = (output: ReadonlyArray<OutputBlock>, qualifiedName: string): ReadonlyArray<OutputBlock> => {
  if (!output.some(isUnscoped)) return output
  return output.map((block) => isUnscoped(block) ? { ...block, model_provider_name: qualifiedName } : block)
}

const isUnscoped = (block: OutputBlock): boolean => block.type === "unknown" && block.model_provider_name === unscopedProvider

/** A streamed answer: a 2xx event stream, read as the codec frames and parses it. */
const streamed = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  reply: HttpStreamReply,
  request: HttpCall,
  apiKey: string | undefined
): Effect.Effect<ProviderStream, ProviderFailure> => {
  if (!reply.ok) {
    return reply.status >= 200 && reply.status < 300
      ? Effect.fail(failure(notAnEventStream(reply.status, reply.contentType, redactSecrets(reply.text, apiKey)), apiKey))
      : failedReply(codec, reply, apiKey)
  }
  return Effect.sync(() => ({
    rawRequest: request.body,
    next: chunksOf(codec.framing, codec.streamParser(), reply.body, apiKey),
    close: reply.body.close
  }))
}

const noProviderTools: ReadonlyArray<unknown> = []

/** The request's `provider_tools` meant for this call's model and provider (all, when unscoped). */
const providerToolsFor = (call: ProviderCall): ReadonlyArray<unknown> => {
  const all = call.request.providerTools
  if (all.length === 0) return noProviderTools
  const tools: Array<unknown> = []
  for (const providerTool of all) {
    if (providerTool.modelName !== undefined && providerTool.modelName !== call.modelName) continue
    if (providerTool.providerName !== undefined && providerTool.providerName !== call.providerName) continue
    tools.push(providerTool.tool)
  }
  return tools
}

const isHttpCall = (value: HttpCall | ProviderFailure | InvalidRequest): value is HttpCall =>
  !(value instanceof ProviderFailure || value instanceof InvalidRequest)

/**
 * The HTTP request of one call: the codec's body with the `extra_body` edits applied, its
 * headers with the `extra_headers` edits. An edit that cannot be applied fails the call: a
 * configured one as a failure of this provider, a request's own as an InvalidRequest that ends
 * the inference (the caller asked for a body that cannot be made).
 */
export const wireRequest = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  target: Target,
  call: ProviderCall,
  stream: boolean
): HttpCall | ProviderFailure | InvalidRequest => {
  const caller = call.caller ?? noCaller
  const body = codec.body(call.request, {
    target,
    stream,
    qualifiedName: call.qualifiedName,
    providerTools: providerToolsFor(call),
    caller
  })
  if (body instanceof WireProblem) return new ProviderFailure({ message: redactSecrets(body.message, call.apiKey), timedOut: false, unsupported: true })
  return editedRequest(codec.url(target, stream), codec.headers(target, call.apiKey), body, ownEditsOf(codec, call, caller))
}

const noCaller: CallerContext = { tags: {}, dryrun: false, credentials: {}, extraBody: [], extraHeaders: [] }

/**
 * The call with only the edits its own request takes: all of them, but for a codec that
 * forwards the caller's (`forwardsCallerEdits`), only the provider table's. A call's edits are
 * the provider's followed by the caller's (`providerCall`), so the provider's are a prefix.
 */
const ownEditsOf = <C extends ProviderCall<unknown>, Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  call: C,
  caller: CallerContext
): C => {
  if (codec.forwardsCallerEdits !== true || (caller.extraBody.length === 0 && caller.extraHeaders.length === 0)) return call
  return {
    ...call,
    extraBody: call.extraBody.slice(0, call.extraBody.length - caller.extraBody.length),
    extraHeaders: call.extraHeaders.slice(0, call.extraHeaders.length - caller.extraHeaders.length)
  }
}

/** A call's URL, headers and body with its `extra_body` and `extra_headers` edits applied (see `wireRequest`). */
const editedRequest = (
  url: string,
  headers: Record<string, string>,
  body: WireBody,
  call: ProviderCall<unknown>
): HttpCall | ProviderFailure | InvalidRequest => {
  for (const edit of call.extraBody) {
    const problem = applyExtraBodyEdit(body, edit)
    if (problem !== undefined) {
      const field = requestFieldOf(edit)
      return field === undefined ? failure(problem, call.apiKey) : new InvalidRequest({ message: `${field}.pointer: ${problem}` })
    }
  }
  return { url, headers: applyExtraHeaderEdits(headers, call.extraHeaders), body: JSON.stringify(body) }
}

/** Every failure of a call goes through here: upstreams echo the credential they were sent. */
const failure = (message: string, apiKey: string | undefined, timedOut = false) =>
  new ProviderFailure({ message: redactSecrets(message, apiKey), timedOut })

const transportFailure = (error: TransportError, apiKey: string | undefined) => failure(error.message, apiKey, error.timedOut)

const maxErrorDetail = 1000

/**
 * An answer outside 2xx: its status, its Retry-After, and what the body explains. The body is
 * cleaned before it is cut (which could split a key), the explanation again (the codec may
 * have unescaped it).
 */
export const replyFailure = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  reply: { readonly status: number; readonly text: string; readonly retryAfter?: string | undefined },
  apiKey: string | undefined,
  nowMs: number
): ProviderFailure => {
  const status = codec.errorStatus?.(reply.status, reply.text) ?? reply.status
  const clean = redactSecrets(reply.text, apiKey)
  const explained = codec.errorMessage(clean) ?? clean
  const detail = explained.length > maxErrorDetail ? `${explained.slice(0, maxErrorDetail)}...` : explained
  return new ProviderFailure({
    message: redactSecrets(`HTTP ${reply.status}: ${detail}`, apiKey),
    timedOut: false,
    status,
    retryAfterS: parseRetryAfter(reply.retryAfter, nowMs)
  })
}

const failedReply = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  reply: { readonly status: number; readonly text: string; readonly retryAfter?: string | undefined },
  apiKey: string | undefined
): Effect.Effect<never, ProviderFailure> =>
  Effect.clockWith((clock) => Effect.fail(replyFailure(codec, reply, apiKey, clock.currentTimeMillisUnsafe())))

/** A 2xx answer to a streamed request that is not an event stream (an HTML page from a proxy, say). */
const notAnEventStream = (status: number, contentType: string | undefined, text: string): string =>
  `HTTP ${status} with content type ${
    contentType === undefined ? "(none)" : JSON.stringify(contentType.slice(0, 100))
  } where an event stream (text/event-stream) was expected: ${text.length > 200 ? `${text.slice(0, 200)}...` : text}`

const emptyStream = "the provider's event stream ended without any event"

/**
 * The chunks of a streamed answer, one array per read of the body: cut by the framing and read
 * by the codec in one pull, in plain code (the caller closes the body). A stream counts once it has sent one chunk: one that
 * ends before is a failure, not an empty answer. An event the codec cannot read fails the
 * stream after the chunks before it.
 */
const chunksOf = <Event>(
  framing: StreamFraming<Event>,
  parse: StreamEventParser<Event>,
  body: ByteReader,
  apiKey: string | undefined
): ChunkPull => {
  const cutter = framing.cutter()
  const events: Array<Event> = []
  let started = false
  /** the framing's end came, or the body's */
  let ended = false
  let failed: ProviderFailure | undefined
  const read = Effect.mapError(body.read, (error) => transportFailure(error, apiKey))
  const next = (): ChunkPull => {
    if (failed !== undefined) return Effect.fail(failed)
    if (ended) return started ? Cause.done() : Effect.fail(failure(emptyStream, apiKey))
    return Effect.flatMap(read, received)
  }
  const received = (bytes: Uint8Array | undefined) => {
    if (bytes === undefined) {
      ended = true
      cutter.end(events)
    } else if (cutter.feed(bytes, events)) {
      ended = true
    }
    const chunks: Array<ProviderChunk> = []
    for (const event of events) {
      const chunk = parse(event)
      if (chunk instanceof WireProblem) {
        failed = failure(chunk.message, apiKey)
        break
      }
      started = true
      chunks.push(chunk)
    }
    events.length = 0
    return chunks.length > 0 ? Effect.succeed(chunks as unknown as Arr.NonEmptyReadonlyArray<ProviderChunk>) : next()
  }
  return Effect.suspend(next)
}

/** The caller's edits of a call: the variant's, then the request's that apply to it. */
const callerEditsFor = <E>(
  variant: ReadonlyArray<E>,
  requested: ReadonlyArray<ScopedEdit<E>>,
  target: CallTarget
): ReadonlyArray<E> => {
  if (requested.length === 0) return variant
  const edits = [...variant]
  for (const entry of requested) if (scopeMatches(entry.scope, target)) edits.push(entry.edit)
  return edits
}

/** The edits of a call: the provider's, then the caller's. */
const editsFor = <E>(provider: ReadonlyArray<E>, caller: ReadonlyArray<E>): ReadonlyArray<E> =>
  caller.length === 0 ? provider : provider.length === 0 ? caller : [...provider, ...caller]

const noTags: Readonly<Record<string, string>> = {}

/** The request's credentials but the one that is the call's own key (a provider forwarding them must not hand it on). */
const forwardableCredentials = (
  credentials: Readonly<Record<string, string>>,
  apiKey: string | undefined
): Readonly<Record<string, string>> => {
  if (apiKey === undefined) return credentials
  let kept: Record<string, string> | undefined
  for (const name in credentials) {
    if (credentials[name] !== apiKey) continue
    kept ??= { ...credentials }
    delete kept[name]
  }
  return kept ?? credentials
}

/** What a variant adds to every call it makes. */
export interface VariantEdits {
  readonly name: string
  readonly extraBody: ReadonlyArray<ExtraBodyEdit>
  readonly extraHeaders: ReadonlyArray<ExtraHeaderEdit>
}

/** What a request brings to every call: its own scoped edits and its dynamic credentials (and, for a provider forwarding them, its tags and dryrun). */
export interface RequestExtras {
  readonly bodyEdits: ReadonlyArray<ScopedEdit<ExtraBodyEdit>>
  readonly headerEdits: ReadonlyArray<ScopedEdit<ExtraHeaderEdit>>
  readonly credentials: Readonly<Record<string, string>>
  readonly tags?: Readonly<Record<string, string>> | undefined
  readonly dryrun?: boolean | undefined
}

/** The credential of one call: a dynamic one missing from the request is the caller's fault, another missing one this provider's. */
const credentialFor = (
  credential: Credential,
  provider: ProviderConfig,
  modelName: string,
  requested: Readonly<Record<string, string>>
): string | undefined | InvalidRequest | ProviderFailure => {
  switch (credential.kind) {
    case "static":
      return credential.value
    case "none":
      return undefined
    case "missing":
      return new ProviderFailure({ message: credential.what, timedOut: false })
    case "dynamic": {
      const value = requested[credential.name]
      return value !== undefined ? value : new InvalidRequest({
        message: `credentials.${credential.name}: missing; provider "${provider.name}" of model "${modelName}" reads its API key from dynamic::${credential.name}`
      })
    }
    case "fallback": {
      const primary = credentialFor(credential.primary, provider, modelName, requested)
      return typeof primary === "object" ? credentialFor(credential.fallback, provider, modelName, requested) : primary
    }
  }
}

/** Whether the credential `credentialFor` resolves to is one the request gave (`dynamic::`, or a fallback's that is). */
const credentialFromRequest = (
  credential: Credential,
  provider: ProviderConfig,
  modelName: string,
  requested: Readonly<Record<string, string>>
): boolean => {
  switch (credential.kind) {
    case "dynamic":
      return requested[credential.name] !== undefined
    case "fallback":
      return typeof credentialFor(credential.primary, provider, modelName, requested) === "object"
        ? credentialFromRequest(credential.fallback, provider, modelName, requested)
        : credentialFromRequest(credential.primary, provider, modelName, requested)
    default:
      return false
  }
}

/**
 * The call for one provider of a model, or why it cannot be made: a missing dynamic credential
 * is the caller's fault (it ends the inference), a missing environment variable this provider's.
 */
export const providerCall = <Request = ModelRequest>(
  request: Request,
  modelName: string,
  provider: ProviderConfig,
  variant: VariantEdits,
  extras: RequestExtras
): ProviderCall<Request> | InvalidRequest | ProviderFailure => {
  const apiKey = credentialFor(provider.credential, provider, modelName, extras.credentials)
  if (typeof apiKey === "object") return apiKey
  const target: CallTarget = { variantName: variant.name, modelName, providerName: provider.name }
  const caller: CallerContext = {
    tags: extras.tags ?? noTags,
    dryrun: extras.dryrun === true,
    credentials: forwardableCredentials(extras.credentials, apiKey),
    extraBody: callerEditsFor(variant.extraBody, extras.bodyEdits, target),
    extraHeaders: callerEditsFor(variant.extraHeaders, extras.headerEdits, target)
  }
  return {
    request,
    apiKey,
    credentialFromRequest: provider.credential.kind !== "static" && credentialFromRequest(provider.credential, provider, modelName, extras.credentials),
    extraBody: editsFor(provider.extraBody, caller.extraBody),
    extraHeaders: editsFor(provider.extraHeaders, caller.extraHeaders),
    modelName,
    providerName: provider.name,
    qualifiedName: qualifiedProviderName(modelName, provider.name),
    caller
  }
}
