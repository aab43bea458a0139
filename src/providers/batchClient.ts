/**
 * Batches through the same path as inference: each request's body is built as for one call
 * (`extra_body` applied), and every exchange of the hooks gets the provider's headers, the
 * `extra_headers` edits, authorization and error mapping. A finished batch's answers are read
 * by the codec's `parseResponse`, as a single call's would be.
 */
import * as Effect from "effect/Effect"
import { itemsPerTurn, letIoRun } from "../eventLoop.ts"
import { applyExtraHeaderEdits, type ExtraHeaderEdit } from "../inference/extraBody.ts"
import { type HttpCall, type HttpReply, type HttpStreamReply, HttpTransport } from "../transport.ts"
import {
  type Authorizer,
  type BatchDownload,
  type BatchExchange,
  type BatchExchangeRequest,
  type BatchHooks,
  type BatchItemResult,
  maxResultLineBytes,
  TextBody,
  type WireBody,
  type WireCodec,
  WireProblem
} from "./codec.ts"
import { download, exchange, post } from "./exchange.ts"
import { ProviderFailure } from "./failure.ts"
import { lineCutter } from "./lines.ts"
import { redactSecrets } from "./redact.ts"
import type { BatchClient, BatchPollCall, BatchResult } from "./types.ts"
import { failedReply, failure, redacted, transportFailure } from "./upstreamFailures.ts"
import { scopeUnknownBlocks } from "./wholeAnswer.ts"
import { editedRequest, isHttpCall, noCaller, providerToolsFor } from "./wireRequest.ts"

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

/** The batch client of one configured provider whose codec has batch hooks. */
export const batchClient = <Settings, Target, Event>(
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
