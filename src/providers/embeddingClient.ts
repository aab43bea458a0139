/** Embeddings through the same path as inference: credentials, edits, authorization, transport, error mapping. */
import * as Effect from "effect/Effect"
import type { HttpCall, HttpReply } from "../transport.ts"
import { type Authorizer, type EmbeddingsHooks, type WireCodec, WireProblem } from "./codec.ts"
import { exchange, post } from "./exchange.ts"
import { ProviderFailure } from "./failure.ts"
import type { EmbeddingClient, ProviderEmbeddings } from "./types.ts"
import { failedReply, failure } from "./upstreamFailures.ts"
import { editedRequest, noCaller, ownEditsOf } from "./wireRequest.ts"

/** The embedding client of one configured provider whose codec has embeddings hooks. */
export const embeddingClient = <Settings, Target, Event>(
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
