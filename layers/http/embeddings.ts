/**
 * `POST /openai/v1/embeddings`: decode (a 400 naming the field), embed, answer in OpenAI's shape.
 * Errors are OpenAI's error body (the route is in the OpenAI group).
 */
import * as Effect from "effect/Effect"
import { EmbeddingsRequest } from "../../src/api/embeddings.ts"
import { makeLenientDecoder } from "../../src/decode.ts"
import { embeddingsBody } from "../../src/embeddings/response.ts"
import { EmbeddingService } from "../../src/embeddings/service.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { Configuration } from "../../src/services.ts"
import { decodeBody, jsonResponse, readJsonObject } from "./respond.ts"
import type { Caller } from "../../src/workspace.ts"

const decodeEmbeddings = makeLenientDecoder(EmbeddingsRequest)

/** OpenAI also takes token arrays; the gateway embeds text only, and says so rather than "expected a string" */
const isTokenInput = (input: unknown): boolean =>
  Array.isArray(input) && input.some((item) => typeof item === "number" || Array.isArray(item))

export const embeddingsHandler = (caller: Caller) =>
  Effect.gen(function*() {
    const config = yield* Configuration
    const service = yield* EmbeddingService
    const json = yield* readJsonObject(config.gateway.maxRequestBodyBytes)
    if (isTokenInput(json.input)) {
      return yield* new InvalidRequest({ message: "input: token arrays are not supported; send a string or a list of strings" })
    }
    const request = yield* decodeBody(decodeEmbeddings, json)
    const result = yield* service.embed(request, caller)
    return jsonResponse(JSON.stringify(embeddingsBody(request, result)))
  })
