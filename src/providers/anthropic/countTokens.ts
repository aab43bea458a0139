/**
 * Token counting for `anthropic` and `gcp_vertex_anthropic`: Anthropic's `count_tokens`
 * (https://docs.anthropic.com/en/api/messages-count-tokens), `POST <api_base>messages/count_tokens`,
 * and on Vertex AI `POST .../publishers/anthropic/models/count-tokens:rawPredict` with the model
 * in the body (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/count-tokens).
 * The body is the Messages body the codec sends for the request, without what a count refuses;
 * the answer is `{"input_tokens": N}`.
 */
import { countedTokens } from "../answerReaders.ts"
import { type CountTokensHooks, WireProblem } from "../codec.ts"
import { anthropicBody, type AnthropicTarget } from "./request.ts"

/** what a Messages body has that a count's does not take: the answer's length, streaming, sampling */
const uncounted = ["max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences"] as const

export const anthropicCountTokens: CountTokensHooks<AnthropicTarget> = {
  url: (target) => target.count?.url ?? "",
  body: (request, call) => {
    const body = anthropicBody(request, { ...call, stream: false })
    if (body instanceof WireProblem) return body
    const count = call.target.count
    if (count === undefined) {
      return new WireProblem(`the ${call.target.type} provider counts tokens of a publisher model (model_id), not of a deployed endpoint (endpoint_id)`)
    }
    for (const field of uncounted) delete body[field]
    // Vertex names the model in the URL of an inference, in the body of a count
    body.model = count.model
    return body
  },
  parse: (text) => countedTokens(text, "input_tokens")
}
