/**
 * Turning outcomes into HTTP responses: JSON bodies, the one error body, and the guard
 * every handler runs inside (typed errors -> their status, defects -> a logged 500).
 */
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { type Decoded, formatFieldIssues } from "../../src/decode.ts"
import { jsonShapeMessage, jsonShapeProblem } from "../../src/jsonShape.ts"
import {
  errorBody,
  type GatewayError,
  InternalError,
  InvalidRequest,
  isGatewayError,
  type PayloadTooLarge,
  type ServiceUnavailable
} from "../../src/errors.ts"
import { readRequestBody, RequestBodyBudget } from "./requestBody.ts"

export const jsonResponse = (
  body: string,
  status = 200,
  headers?: Readonly<Record<string, string>>
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, { status, contentType: "application/json", ...(headers === undefined ? {} : { headers }) })

/** a 429 (and a 503 or an upstream failure that knows) says when to come back, a 401 how to authenticate */
export const errorHeaders = (error: GatewayError): Readonly<Record<string, string>> | undefined =>
  error._tag === "RateLimited" || (error._tag !== "Unauthorized" && "retryAfterS" in error && error.retryAfterS !== undefined)
    ? { "retry-after": String(Math.ceil((error as { readonly retryAfterS: number }).retryAfterS)) }
    : error._tag === "Unauthorized"
    ? { "www-authenticate": "Bearer" }
    : undefined

export const errorResponse = (error: GatewayError): HttpServerResponse.HttpServerResponse =>
  jsonResponse(errorBody(error), error.status, errorHeaders(error))

/**
 * With TensorZero's `gateway.unstable_error_json`: the error body also carries the error as a
 * JSON value under its kind, `{"error": "...", "error_json": {"InvalidRequest": {"message": "..."}}}`
 * (TensorZero calls its shape unstable; its clients read `error_json` only when present).
 */
export const errorResponseWithJson = (error: GatewayError): HttpServerResponse.HttpServerResponse =>
  jsonResponse(JSON.stringify({ error: error.message, error_json: { [error._tag]: { message: error.message } } }), error.status, errorHeaders(error))

/** Runs a handler, answering its typed errors with their status and body, and defects with a 500. */
export const guarded = <E, R>(
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  toResponse: (error: GatewayError) => HttpServerResponse.HttpServerResponse = errorResponse
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
  handler.pipe(
    Effect.catchCause((cause) => {
      const failure = cause.reasons.find((reason) => reason._tag === "Fail")
      if (failure !== undefined && isGatewayError(failure.error)) return Effect.succeed(toResponse(failure.error))
      if (cause.reasons.every((reason) => reason._tag === "Interrupt")) return Effect.failCause(cause as any)
      return Effect.logError("request failed unexpectedly", cause).pipe(
        Effect.as(toResponse(new InternalError({ message: "internal error; see the gateway log" })))
      )
    })
  ) as Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>

const textDecoder = new TextDecoder()

/** a JSON object, or the 400 saying what the body is instead */
const parseJsonObject = (body: Uint8Array): Effect.Effect<Record<string, unknown>, InvalidRequest> => {
  // on the bytes, before the parse: its work is then bounded by the body's shape, not only its size
  const problem = jsonShapeProblem(body)
  if (problem !== undefined) return Effect.fail(new InvalidRequest({ message: jsonShapeMessage(problem, body) }))
  const text = textDecoder.decode(body)
  if (text.trim() === "") return Effect.fail(new InvalidRequest({ message: "the request body is empty; expected a JSON object" }))
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Effect.fail(new InvalidRequest({ message: `malformed JSON: ${(error as Error).message}` }))
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return Effect.fail(new InvalidRequest({ message: "the request body must be a JSON object" }))
  }
  return Effect.succeed(json as Record<string, unknown>)
}

/**
 * Reads and parses a JSON object body: 400 for anything else, 413 past `maxBytes`, 503 when
 * the bodies being received at once would exceed the server's budget (see requestBody.ts).
 */
export const readJsonObject = (
  maxBytes: number
): Effect.Effect<
  Record<string, unknown>,
  InvalidRequest | PayloadTooLarge | ServiceUnavailable,
  HttpServerRequest.HttpServerRequest
> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.withFiber((fiber) => readRequestBody(request, maxBytes, fiber.getRef(RequestBodyBudget), parseJsonObject)))

export const decodeBody = <A>(decode: (input: unknown) => Decoded<A>, json: unknown): Effect.Effect<A, InvalidRequest> => {
  const decoded = decode(json)
  return decoded.ok ? Effect.succeed(decoded.value) : Effect.fail(new InvalidRequest({ message: formatFieldIssues(decoded.issues) }))
}

/** Reads, parses and decodes a JSON body, with a 400 naming the field for any problem. */
export const readJsonBody = <A>(
  decode: (input: unknown) => Decoded<A>,
  maxBytes: number
): Effect.Effect<A, InvalidRequest | PayloadTooLarge | ServiceUnavailable, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(readJsonObject(maxBytes), (json) => decodeBody(decode, json))
