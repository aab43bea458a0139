/**
 * Failure mapping: every way a call to a provider fails becomes a `ProviderFailure` whose
 * message carries no key (upstreams echo the credential they were sent), and an answer outside
 * 2xx keeps its status, its Retry-After and what its body explains.
 */
import * as Effect from "effect/Effect"
import type { TransportError } from "../transport.ts"
import type { WireCodec } from "./codec.ts"
import { ProviderFailure } from "./failure.ts"
import { redactSecrets } from "./redact.ts"
import { parseRetryAfter } from "./retryAfter.ts"

/** Every failure of a call goes through here: upstreams echo the credential they were sent. */
export const failure = (message: string, apiKey: string | undefined, timedOut = false) =>
  new ProviderFailure({ message: redactSecrets(message, apiKey), timedOut })

export const transportFailure = (error: TransportError, apiKey: string | undefined) => failure(error.message, apiKey, error.timedOut)

/** a hook's own failures (beside the exchanges', already clean) carry no key either */
export const redacted = <A, R>(effect: Effect.Effect<A, ProviderFailure, R>, apiKey: string | undefined) =>
  Effect.mapError(effect, (error) =>
    new ProviderFailure({
      message: redactSecrets(error.message, apiKey),
      timedOut: error.timedOut,
      status: error.status,
      retryAfterS: error.retryAfterS,
      unsupported: error.unsupported
    }))

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

/** `replyFailure` at the clock's time, failed */
export const failedReply = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  reply: { readonly status: number; readonly text: string; readonly retryAfter?: string | undefined },
  apiKey: string | undefined
): Effect.Effect<never, ProviderFailure> =>
  Effect.clockWith((clock) => Effect.fail(replyFailure(codec, reply, apiKey, clock.currentTimeMillisUnsafe())))
