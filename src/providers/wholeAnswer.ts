/** A whole (not streamed) answer read: a 2xx the codec can parse, its `unknown` blocks scoped to the call's provider. */
import * as Effect from "effect/Effect"
import type { OutputBlock, ProviderResponse } from "../inference/types.ts"
import type { HttpCall, HttpReply } from "../transport.ts"
import { unscopedProvider, type WireCodec, WireProblem } from "./codec.ts"
import type { ProviderFailure } from "./failure.ts"
import { failedReply, failure } from "./upstreamFailures.ts"

/** A whole answer: a 2xx the codec can read. */
export const wholeAnswer = <Settings, Target, Event>(
  codec: WireCodec<Settings, Target, Event>,
  reply: HttpReply,
  request: HttpCall,
  apiKey: string | undefined,
  qualifiedName: string
): Effect.Effect<ProviderResponse, ProviderFailure> => {
  if (reply.status < 200 || reply.status >= 300) return failedReply(codec, reply, apiKey)
  const parsed = codec.parseResponse(reply.text, qualifiedName)
  if (parsed instanceof WireProblem) return Effect.fail(failure(parsed.message, apiKey))
  return Effect.succeed({
    output: scopeUnknownBlocks(parsed.output, qualifiedName),
    usage: parsed.usage,
    finishReason: parsed.finishReason,
    providerStop: parsed.providerStop,
    rawRequest: request.body,
    rawResponse: reply.text
  })
}

/**
 * `unknown` output blocks name the provider that made them, so that they go back only to it: a
 * codec that reads them without the call's name leaves it empty, and it is filled here.
 */
export const scopeUnknownBlocks = (output: ReadonlyArray<OutputBlock>, qualifiedName: string): ReadonlyArray<OutputBlock> => {
  if (!output.some(isUnscoped)) return output
  return output.map((block) => isUnscoped(block) ? { ...block, model_provider_name: qualifiedName } : block)
}

const isUnscoped = (block: OutputBlock): boolean => block.type === "unknown" && block.model_provider_name === unscopedProvider
