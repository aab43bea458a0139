/** The answer of `POST /openai/v1/embeddings` in OpenAI's shape (src/api/embeddings.ts). */
import type { EmbeddingsRequest } from "../api/embeddings.ts"
import type { EmbeddingResult } from "./result.ts"

/** OpenAI's base64 encoding: the vector's float32 values, little-endian, in base64 */
export const base64Embedding = (vector: ReadonlyArray<number>): string => {
  const view = new DataView(new ArrayBuffer(vector.length * 4))
  vector.forEach((value, index) => view.setFloat32(index * 4, value, true))
  return Buffer.from(view.buffer).toString("base64")
}

export const embeddingsBody = (request: EmbeddingsRequest, result: EmbeddingResult): Record<string, unknown> => {
  const base64 = request.encoding_format === "base64"
  const body: Record<string, unknown> = {
    object: "list",
    data: result.embeddings.map((vector, index) => ({
      object: "embedding",
      index,
      embedding: base64 ? base64Embedding(vector) : vector
    })),
    model: request.model,
    usage: { prompt_tokens: result.inputTokens, total_tokens: result.inputTokens }
  }
  if (request["gateway::include_raw_response"] === true) {
    body.gateway_raw_response = [{ model_inference_id: result.id, provider_type: result.provider.config.type, data: result.rawResponse }]
  }
  return body
}
