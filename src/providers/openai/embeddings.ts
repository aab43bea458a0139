/**
 * OpenAI's embeddings wire format (`POST {api_base}/embeddings`), spoken by every member of the
 * Chat Completions family that serves embeddings (OpenAI, OpenRouter, vLLM, Ollama...).
 * Follows https://platform.openai.com/docs/api-reference/embeddings/create. Floats are always
 * asked for: the gateway encodes base64 itself when its caller asks, so one stored answer
 * serves both encodings.
 */
import type { EmbeddingRequest, EmbeddingResponse, EmbeddingsHooks, WireBody } from "../codec.ts"
import { WireProblem } from "../codec.ts"

/** what an embeddings call needs from a provider's target */
export interface EmbeddingsTarget {
  readonly embeddingsUrl: string
  readonly model: string
}

export const embeddingsUrl = (apiBase: string): string =>
  new URL("embeddings", apiBase.endsWith("/") ? apiBase : `${apiBase}/`).toString()

export const openAiEmbeddingsBody = (target: EmbeddingsTarget, request: EmbeddingRequest): WireBody => {
  const body: WireBody = { model: target.model, input: request.input, encoding_format: "float" }
  if (request.dimensions !== undefined) body.dimensions = request.dimensions
  return body
}

const isVector = (value: unknown): value is ReadonlyArray<number> =>
  Array.isArray(value) && value.every((item) => typeof item === "number")

const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0)

/** `{data: [{embedding, index}], usage: {prompt_tokens, total_tokens}}`, the vectors put in input order by `index` */
export const parseOpenAiEmbeddings = (text: string): EmbeddingResponse | WireProblem => {
  let parsed: any
  try {
    parsed = JSON.parse(text)
  } catch {
    return new WireProblem("the provider answered with a body that is not JSON")
  }
  if (!Array.isArray(parsed?.data)) return new WireProblem("the provider's embeddings answer has no `data` list")
  const embeddings: Array<ReadonlyArray<number>> = []
  for (const [position, item] of (parsed.data as Array<any>).entries()) {
    const index = typeof item?.index === "number" ? item.index : position
    if (!isVector(item?.embedding)) {
      return new WireProblem(`the provider's embeddings answer has no list of numbers at data[${position}].embedding`)
    }
    if (!Number.isInteger(index) || index < 0 || index >= parsed.data.length || embeddings[index] !== undefined) {
      return new WireProblem(`the provider's embeddings answer has a bad index at data[${position}].index`)
    }
    embeddings[index] = item.embedding
  }
  return { embeddings, usage: { input_tokens: count(parsed.usage?.prompt_tokens), output_tokens: 0 } }
}

export const openAiEmbeddingsHooks: EmbeddingsHooks<EmbeddingsTarget> = {
  url: (target) => target.embeddingsUrl,
  body: openAiEmbeddingsBody,
  parse: parseOpenAiEmbeddings
}
