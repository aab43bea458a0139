/**
 * `openai`: OpenAI Chat Completions, and any server that speaks it (`api_base`).
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { ProviderChunk, ProviderResponse } from "../../inference/types.ts"
import { HttpTransport, type TransportError } from "../../services.ts"
import { redactSecrets } from "../redact.ts"
import { sseData } from "../sse.ts"
import {
  type ProviderCall,
  type ProviderClient,
  type ProviderDefinition,
  ProviderFailure,
  type ProviderStream
} from "../types.ts"
import { buildOpenAiRequest, chatCompletionsUrl } from "./request.ts"
import { emptyStream, errorMessageOf, makeOpenAiChunkParser, notAnEventStream, parseOpenAiResponse } from "./response.ts"

export const defaultOpenAiApiBase = "https://api.openai.com/v1/"

/** The failures of one call, with its credential taken out of their messages (upstreams echo it). */
const failuresOf = (call: ProviderCall) => {
  const failure = (message: string, timedOut = false) =>
    new ProviderFailure({ message: redactSecrets(message, call.apiKey), timedOut })
  return {
    failure,
    fromTransport: (error: TransportError) => failure(error.message, error.timedOut),
    // the body is cleaned before `errorMessageOf` shortens it, which could cut a key in two
    fromReply: (status: number, text: string) => failure(errorMessageOf(status, redactSecrets(text, call.apiKey)))
  }
}

export const makeOpenAiClient = (modelName: string, apiBase: string): ProviderClient => {
  const url = chatCompletionsUrl(apiBase)

  const infer = (call: ProviderCall): Effect.Effect<ProviderResponse, ProviderFailure, HttpTransport> => {
    const { failure, fromReply, fromTransport } = failuresOf(call)
    const built = buildOpenAiRequest(call, modelName, url, false)
    if (typeof built === "string") return Effect.fail(failure(built))
    return HttpTransport.use((http) => http.post(built)).pipe(
      Effect.mapError(fromTransport),
      Effect.flatMap((reply) => {
        if (reply.status < 200 || reply.status >= 300) return Effect.fail(fromReply(reply.status, reply.text))
        const parsed = parseOpenAiResponse(reply.text)
        if (typeof parsed === "string") return Effect.fail(failure(parsed))
        return Effect.succeed({ ...parsed, rawRequest: built.body, rawResponse: reply.text })
      })
    )
  }

  const stream = (call: ProviderCall): Effect.Effect<ProviderStream, ProviderFailure, HttpTransport> => {
    const { failure, fromReply, fromTransport } = failuresOf(call)
    const built = buildOpenAiRequest(call, modelName, url, true)
    if (typeof built === "string") return Effect.fail(failure(built))
    return HttpTransport.use((http) => http.postStream(built)).pipe(
      Effect.mapError(fromTransport),
      Effect.flatMap((reply) => {
        if (!reply.ok) {
          return Effect.fail(
            reply.status >= 200 && reply.status < 300
              ? failure(notAnEventStream(reply.status, reply.contentType, redactSecrets(reply.text, call.apiKey)))
              : fromReply(reply.status, reply.text)
          )
        }
        return Effect.sync(() => {
          const parse = makeOpenAiChunkParser()
          // a stream counts once it has sent one chunk: one that ends before is a failure, not an empty answer
          let started = false
          const chunks = sseData(Stream.mapError(reply.body, fromTransport)).pipe(
            Stream.takeWhile((data) => data !== "[DONE]"),
            Stream.mapEffect((data) => {
              const chunk = parse(data)
              if (typeof chunk === "string") return Effect.fail(failure(chunk))
              started = true
              return Effect.succeed(chunk as ProviderChunk)
            }),
            Stream.concat(Stream.suspend(() => started ? Stream.empty : Stream.fail(failure(emptyStream))))
          )
          return { rawRequest: built.body, chunks }
        })
      })
    )
  }

  return { infer, stream }
}

export const openAiProvider: ProviderDefinition = {
  type: "openai",
  defaultCredential: { kind: "env", name: "OPENAI_API_KEY" },
  settingsFields: {
    api_base: Schema.optional(Schema.String)
  },
  make: (config) => makeOpenAiClient(config.modelName, (config.settings.api_base as string | undefined) ?? defaultOpenAiApiBase)
}
