/**
 * The one error model of the service. Every failure a caller can see is one of these
 * tagged errors; each carries its HTTP status, and `errorMessage` gives the text of the
 * `{"error": "..."}` body (or the OpenAI-shaped body on `/openai/v1/*`).
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/** 400: malformed JSON, unknown or missing fields, failed validation. The message names the field. */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String
}) {
  get status(): number {
    return 400
  }
}

/** 401: no valid API key (authentication is on). The message never echoes the secret. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}) {
  get status(): number {
    return 401
  }
}

/** 403: a valid API key without the role the route requires (the UI's routes need `admin`), or a UI request without its CSRF token. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {
  get status(): number {
    return 403
  }
}

/** A budget that refused a call (docs/budgets.md), as the 429's body shows it beside `error`. */
export const BudgetRefusal = Schema.Struct({
  scope: Schema.Struct({ kind: Schema.String, value: Schema.String }),
  period: Schema.String,
  limit: Schema.Finite,
  spent: Schema.Finite,
  remaining: Schema.Finite,
  /** RFC 3339; null for a `total` budget, which never resets */
  resets_at: Schema.NullOr(Schema.String)
})
export type BudgetRefusal = typeof BudgetRefusal.Type

/** 429: a rate limit rule or a budget refuses the request; `retryAfterS` goes into the Retry-After header. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  message: Schema.String,
  retryAfterS: Schema.Finite,
  /** the budget that refused the call, when one did */
  budget: Schema.optional(BudgetRefusal)
}) {
  get status(): number {
    return 429
  }
}

/** 404: unknown function, variant, model, metric or route. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}) {
  get status(): number {
    return 404
  }
}

/** 405: a known path called with another method. */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>()("MethodNotAllowed", {
  message: Schema.String
}) {
  get status(): number {
    return 405
  }
}

/** 409: the request lost to a concurrent change (a datapoint updated by another request first). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String
}) {
  get status(): number {
    return 409
  }
}

/** 408: the inference did not finish within its configured timeout. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", {
  message: Schema.String
}) {
  get status(): number {
    return 408
  }
}

/** 413: the request body exceeds the configured maximum. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  message: Schema.String
}) {
  get status(): number {
    return 413
  }
}

/**
 * Whose fault an upstream failure was, from the most telling to the least (see `worstKind`):
 * `upstream` (a 5xx, a refused credential, an unreadable answer, a network error: 502),
 * `rate_limited` (429), `timeout` (504), `request` (the request's own fault, a 400/404/413/422
 * such as a context too long: 400).
 */
export const UpstreamFailureKind = Schema.Literals(["upstream", "rate_limited", "timeout", "request"])
export type UpstreamFailureKind = typeof UpstreamFailureKind.Type

const kindRank: Readonly<Record<UpstreamFailureKind, number>> = { upstream: 3, rate_limited: 2, timeout: 1, request: 0 }

/**
 * The kind several failures add up to: a failure of an upstream's own beats a rate limit,
 * which beats a timeout, which beats the request's fault. So 400 only when every upstream
 * blamed the request, 429 when the rest were rate limits, timeouts or the request's fault.
 */
export const worstKind = (kinds: Iterable<UpstreamFailureKind>): UpstreamFailureKind => {
  let worst: UpstreamFailureKind = "request"
  for (const kind of kinds) if (kindRank[kind] > kindRank[worst]) worst = kind
  return worst
}

/** the HTTP status of failures of `kind`, after every fallback */
export const statusOfKind = (kind: UpstreamFailureKind): number => {
  switch (kind) {
    case "upstream":
      return 502
    case "rate_limited":
      return 429
    case "timeout":
      return 504
    case "request":
      return 400
  }
}

/** the failure fields shared by the two "all failed" errors */
const upstreamFailureFields = {
  message: Schema.String,
  kind: UpstreamFailureKind,
  /** 429: the largest Retry-After (seconds) an upstream sent, when any did */
  retryAfterS: Schema.optional(Schema.Finite),
  /**
   * an upstream failure where every provider that failed but for the request's fault said it
   * was overloaded (529, or 503): the Anthropic surface answers Anthropic's 529 `overloaded_error`, the others 502
   */
  overloaded: Schema.optional(Schema.Boolean)
}

/**
 * Every provider of a model failed; the message lists each provider's error. Its status says
 * whose fault it was (`kind`): 400, 429 (with Retry-After), 504 or 502.
 */
export class AllProvidersFailed extends Schema.TaggedError<AllProvidersFailed>()("AllProvidersFailed", upstreamFailureFields) {
  get status(): number {
    return statusOfKind(this.kind)
  }
}

/** Every sampled variant failed; the message lists each variant's error, the status as `AllProvidersFailed`'s. */
export class AllVariantsFailed extends Schema.TaggedError<AllVariantsFailed>()("AllVariantsFailed", upstreamFailureFields) {
  get status(): number {
    return statusOfKind(this.kind)
  }
}

/** 503: a database the request needs does not answer, or the gateway is too busy receiving requests. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", {
  message: Schema.String,
  /** when set, the answer's Retry-After header (seconds) */
  retryAfterS: Schema.optional(Schema.Finite)
}) {
  get status(): number {
    return 503
  }
}

/** 500: a bug or an unexpected condition; the details go to the log, not to the caller. */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", {
  message: Schema.String
}) {
  get status(): number {
    return 500
  }
}

export type GatewayError =
  | InvalidRequest
  | Unauthorized
  | Forbidden
  | RateLimited
  | NotFound
  | MethodNotAllowed
  | RequestTimeout
  | Conflict
  | PayloadTooLarge
  | AllProvidersFailed
  | AllVariantsFailed
  | ServiceUnavailable
  | InternalError

const gatewayErrorTags: ReadonlySet<string> = new Set([
  "InvalidRequest",
  "Conflict",
  "Unauthorized",
  "Forbidden",
  "RateLimited",
  "NotFound",
  "MethodNotAllowed",
  "RequestTimeout",
  "PayloadTooLarge",
  "AllProvidersFailed",
  "AllVariantsFailed",
  "ServiceUnavailable",
  "InternalError"
])

export const isGatewayError = (u: unknown): u is GatewayError =>
  Predicate.hasProperty(u, "_tag") && gatewayErrorTags.has(u._tag as string)

/** The body every endpoint outside `/openai/v1` answers with on failure. */
export const errorBody = (error: GatewayError): string => JSON.stringify({ error: error.message, ...budgetField(error) })

/** `{budget}` beside a body's error when a budget refused the call, else nothing: every surface's error body carries it */
export const budgetField = (error: GatewayError): { readonly budget?: BudgetRefusal } =>
  error._tag === "RateLimited" && error.budget !== undefined ? { budget: error.budget } : {}
