/**
 * Turning outcomes into HTTP responses: JSON bodies, the one error body, and the guard
 * every handler runs inside (typed errors -> their status, defects -> a logged 500).
 */
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { type Decoded, formatFieldIssues } from "../../src/decode.ts"
import { errorBody, type GatewayError, InternalError, InvalidRequest, isGatewayError, PayloadTooLarge } from "../../src/errors.ts"

export const jsonResponse = (
  body: string,
  status = 200,
  headers?: Readonly<Record<string, string>>
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, { status, contentType: "application/json", ...(headers === undefined ? {} : { headers }) })

/** a 429 says when to come back, a 401 how to authenticate */
export const errorHeaders = (error: GatewayError): Readonly<Record<string, string>> | undefined =>
  error._tag === "RateLimited"
    ? { "retry-after": String(Math.ceil(error.retryAfterS)) }
    : error._tag === "Unauthorized"
    ? { "www-authenticate": "Bearer" }
    : undefined

export const errorResponse = (error: GatewayError): HttpServerResponse.HttpServerResponse =>
  jsonResponse(errorBody(error), error.status, errorHeaders(error))

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

const isTooLarge = (error: unknown): boolean => /BodyTooLarge|MaxBytes/.test(`${String(error)} ${JSON.stringify(error)}`)

/** Reads and parses a JSON object body (400 for anything else, 413 past `maxBytes`). */
export const readJsonObject = (
  maxBytes: number
): Effect.Effect<Record<string, unknown>, InvalidRequest | PayloadTooLarge, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const tooLarge = () => new PayloadTooLarge({ message: `the request body exceeds the limit of ${maxBytes} bytes` })
    const declared = Number(request.headers["content-length"])
    if (declared > maxBytes) return Effect.fail(tooLarge())
    return request.text.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBytes)),
      Effect.mapError((error) => isTooLarge(error) ? tooLarge() : new InvalidRequest({ message: "could not read the request body" })),
      Effect.flatMap((text) => {
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
      })
    )
  })

export const decodeBody = <A>(decode: (input: unknown) => Decoded<A>, json: unknown): Effect.Effect<A, InvalidRequest> => {
  const decoded = decode(json)
  return decoded.ok ? Effect.succeed(decoded.value) : Effect.fail(new InvalidRequest({ message: formatFieldIssues(decoded.issues) }))
}

/** Reads, parses and decodes a JSON body, with a 400 naming the field for any problem. */
export const readJsonBody = <A>(
  decode: (input: unknown) => Decoded<A>,
  maxBytes: number
): Effect.Effect<A, InvalidRequest | PayloadTooLarge, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(readJsonObject(maxBytes), (json) => decodeBody(decode, json))
