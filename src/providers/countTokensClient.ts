/**
 * Token counting through the same path as inference: the codec's body (its hook strips what a
 * count does not take), the call's credential and authorizer (SigV4, Vertex tokens), its
 * `extra_headers`, the transport and the error mapping. The call's `extra_body` edits are not
 * applied: they point into the inference body (`/max_tokens`, `/additionalModelRequestFields/...`),
 * which a count's body is not.
 */
import * as Effect from "effect/Effect"
import type { HttpCall, HttpReply } from "../transport.ts"
import { type Authorizer, type CountTokensHooks, type WireCodec, WireProblem } from "./codec.ts"
import { exchange, post } from "./exchange.ts"
import type { ProviderFailure } from "./failure.ts"
import type { ProviderClient } from "./types.ts"
import { failedReply, failure } from "./upstreamFailures.ts"
import { builtRequest } from "./wireRequest.ts"

const noEdits: ReadonlyArray<never> = []

/** The `countTokens` of one configured provider whose codec has token-counting hooks. */
export const countTokensClient = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  hooks: CountTokensHooks<Target>,
  target: Target,
  authorize: Authorizer | undefined
): NonNullable<ProviderClient["countTokens"]> => {
  const read = (
    _codec: WireCodec<Settings, Target, Event>,
    reply: HttpReply,
    _request: HttpCall,
    apiKey: string | undefined
  ): Effect.Effect<number, ProviderFailure> => {
    if (reply.status < 200 || reply.status >= 300) return failedReply(codec, reply, apiKey)
    const count = hooks.parse(reply.text)
    return count instanceof WireProblem ? Effect.fail(failure(count.message, apiKey)) : Effect.succeed(count)
  }
  return (call) => {
    const built = builtRequest(codec, target, { ...call, extraBody: noEdits }, false, hooks.url(target), hooks.body)
    return exchange(codec, authorize, call, built, post, read)
  }
}
