/**
 * One provider's failure (ProviderFailure) and how the inference path reads it: whose fault it
 * was and its text in the model's error. Apart from types.ts so the codecs and the clients
 * share it without importing each other.
 */
import * as Schema from "effect/Schema"
import type { UpstreamFailureKind } from "../errors.ts"

/** One provider's failure; collected into the model's error when every provider fails. */
export class ProviderFailure extends Schema.TaggedError<ProviderFailure>()("ProviderFailure", {
  message: Schema.String,
  timedOut: Schema.Boolean,
  /** the upstream's HTTP status, when it answered outside 2xx */
  status: Schema.optional(Schema.Int),
  /** the upstream's Retry-After, in seconds from when it answered */
  retryAfterS: Schema.optional(Schema.Finite),
  /** the provider cannot express the request (a feature it lacks): not sent, and the request's fault if no provider can */
  unsupported: Schema.optional(Schema.Boolean)
}) {}

/** upstream statuses that blame the request itself (a context too long, a bad parameter, a payload too large) */
const requestFaultStatuses: ReadonlySet<number> = new Set([400, 404, 413, 422])

/** A failure's text in the model's error: a refused credential says so (its fix is the operator's, not the caller's). */
export const describeFailure = (failure: ProviderFailure): string =>
  failure.status === 401 || failure.status === 403 ? `credentials refused, ${failure.message}` : failure.message

/** Whose fault one provider's failure was (see `UpstreamFailureKind`). */
export const failureKind = (failure: ProviderFailure): UpstreamFailureKind =>
  failure.timedOut
    ? "timeout"
    : failure.status === 429
    ? "rate_limited"
    : failure.unsupported === true || (failure.status !== undefined && requestFaultStatuses.has(failure.status))
    ? "request"
    : "upstream"
