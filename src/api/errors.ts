/**
 * The error responses of the wire contract: a route fails with a `GatewayError` (src/errors.ts),
 * answered with its status and, outside `/openai/`, the body `{"error": "<message>"}` (the OpenAI
 * surface answers OpenAI's shape: src/api/openaiCompatible.ts). Endpoints declare the statuses
 * they can answer, each with what it means, so the document lists them.
 */
import * as Effect from "effect/Effect"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { BudgetRefusal, budgetField, type GatewayError, isGatewayError } from "../errors.ts"

const AnyGatewayError = Schema.declare((u: unknown): u is GatewayError => isGatewayError(u))

/**
 * A `GatewayError` as the body `encode` writes. The gateway only writes these bodies (the
 * the route guard answers every typed error); reading one back into an error is not offered.
 */
export const errorBody = <B extends Schema.Top>(body: B, encode: (error: GatewayError) => B["Type"]) =>
  body.pipe(Schema.decodeTo(
    AnyGatewayError,
    SchemaTransformation.transformEffect<GatewayError, B["Type"]>({
      decode: (input, options) => Effect.fail(new SchemaIssue.Forbidden({ message: "an error body is not read back" }, input, options)),
      encode: (error) => Effect.succeed(encode(error))
    })
  ))

// no identifier: each status's copy carries its own description, and is shown in place
export const ErrorResponseBody = Schema.Struct({
  error: Schema.String.annotate({ description: "what went wrong; a request's problem names the field at fault" }),
  budget: Schema.optional(BudgetRefusal.annotate({ description: "429 only: the budget that refused the call (docs/budgets.md)" }))
})

export const ErrorResponse = errorBody(ErrorResponseBody, (error) => ({ error: error.message, ...budgetField(error) }))

/** What each error status of the gateway means. */
export const errorStatuses = {
  400: "Invalid request: malformed JSON, an unknown or missing field, a failed validation (the message names the field), or every provider blamed the request (context too long, a bad parameter: the message has each provider's own)",
  401: "No valid API key (authentication is on): missing, malformed, unknown, disabled or expired",
  403: "The API key lacks the admin role that the UI's routes (`/v1/ui/...`) and `POST /internal/config/reload` require, or a UI session's request that changes something came without its CSRF token",
  404: "Unknown function, variant, model, metric or inference, or a datapoint that is not in the dataset",
  409: "A datapoint to update was updated by a concurrent request first (it is stale now): read it again and retry; or a GEPA task to export has not completed",
  408: "The inference did not finish within its variant's configured timeout",
  413: "The request body exceeds `max_request_body_bytes`",
  429: "A rate limit or a budget refused the request (a budget's answer carries `budget`), too many failed authentications from this address, or every upstream answered 429 (see Retry-After)",
  500: "An internal error (details in the gateway's log)",
  502: "Every provider failed, and one of them by its own fault: a 5xx, refused credentials, an unreadable answer, a network error (the message has each provider's error)",
  504: "Every provider failed, the last ones by timing out (the message has each provider's error)",
  503: "A database the request needs does not answer, or the gateway receives too many bodies at once (see Retry-After)",
  529: "Anthropic's surface: what the others answer 503 (overloaded_error; see Retry-After)"
} as const
export type ErrorStatus = keyof typeof errorStatuses

/** `body` as the answer of each of `statuses`, for an endpoint's `error` list */
export const errorsWith = <S extends Schema.Top>(body: S, statuses: ReadonlyArray<ErrorStatus>) =>
  statuses.map((status) => body.pipe(HttpApiSchema.status(status)).annotate({ description: errorStatuses[status] }))

/** the `{"error"}` body at each of `statuses` */
export const gatewayErrors = (statuses: ReadonlyArray<ErrorStatus>) => errorsWith(ErrorResponse, statuses)

/** what every route behind an API key can answer besides its own errors */
export const keyedStatuses: ReadonlyArray<ErrorStatus> = [401, 429, 503]

/** what every route of the UI (`AdminOnly`) can answer besides its own errors */
export const adminStatuses: ReadonlyArray<ErrorStatus> = [...keyedStatuses, 403]

/** what every route reading a JSON body can answer besides its own errors */
export const bodyStatuses: ReadonlyArray<ErrorStatus> = [400, 413]
