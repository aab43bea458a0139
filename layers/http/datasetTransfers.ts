/**
 * The dataset transfers of /v1/datasets: datapoints from stored inferences (a JSON body), and a
 * dataset exported and imported as JSON Lines. Export streams the dataset a page at a time (one
 * write per page, chunked), never holding it whole; import streams its body, under a bound of
 * its own, larger than a JSON request's (src/datasets/jsonLines.ts).
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Pull from "effect/Pull"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { FromInferencesRequest, jsonLinesContentType } from "../../src/api/datasets.ts"
import { importBodyLimit } from "../../src/datasets/jsonLines.ts"
import { DatasetService } from "../../src/datasets/service.ts"
import { makeDecoder } from "../../src/decode.ts"
import type { ServiceUnavailable } from "../../src/errors.ts"
import { Configuration } from "../../src/services.ts"
import type { Caller } from "../../src/workspace.ts"
import { datasetNameParam } from "./datasets.ts"
import { jsonResponse, readJsonBody } from "./respond.ts"
import { RequestBodyBudget, requestBodyStream } from "./requestBody.ts"

const decodeFromInferences = makeDecoder(FromInferencesRequest)

const textEncoder = new TextEncoder()

export const fromInferencesHandler = (caller: Caller) => Effect.gen(function*() {
  const name = yield* datasetNameParam
  const config = yield* Configuration
  const request = yield* readJsonBody(decodeFromInferences, config.gateway.maxRequestBodyBytes)
  const ids = yield* (yield* DatasetService).fromInferences(caller.workspace, name, request)
  return jsonResponse(JSON.stringify({ ids }))
})

export const exportDatapointsHandler = Effect.gen(function*() {
  const name = yield* datasetNameParam
  const lines = (yield* DatasetService).exportDatapoints(name)
  const scope = yield* Scope.make()
  const pull = yield* Scope.provide(Stream.toPull(lines), scope)
  // the first page is read before the answer starts: a database that fails then is a 503, not a 200 cut short
  const first = yield* Effect.exit(pull)
  const headers = { "content-disposition": `attachment; filename="${name}.jsonl"` }
  if (Exit.isFailure(first)) {
    yield* Scope.close(scope, Exit.void)
    // the end at once: an empty dataset is an empty file
    if (Pull.isDoneCause(first.cause)) return HttpServerResponse.text("", { contentType: jsonLinesContentType, headers })
    return yield* Effect.failCause(first.cause as Cause.Cause<ServiceUnavailable>)
  }
  let firstPage: ReadonlyArray<string> | undefined = first.value
  // each page of lines is one write
  const pages = Effect.suspend(() => {
    const page = firstPage
    firstPage = undefined
    return Effect.map(page === undefined ? pull : Effect.succeed(page), (lines) => [textEncoder.encode(lines.join(""))] as const)
  })
  const body = Stream.ensuring(Stream.fromPull(Effect.succeed(pages)), Scope.close(scope, Exit.void))
  return HttpServerResponse.stream(body, { contentType: jsonLinesContentType, headers })
})

export const importDatapointsHandler = Effect.gen(function*() {
  const name = yield* datasetNameParam
  const config = yield* Configuration
  const datasets = yield* DatasetService
  const request = yield* HttpServerRequest.HttpServerRequest
  const budget = yield* RequestBodyBudget
  // the body counts against the bytes in flight until the import is written, not just read
  const ids = yield* Effect.scoped(
    Effect.flatMap(requestBodyStream(request, importBodyLimit(config.gateway), budget), (body) => datasets.importDatapoints(name, body))
  )
  return jsonResponse(JSON.stringify({ ids }))
})
