/**
 * Token counting for `aws_bedrock`: Bedrock Runtime's CountTokens
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html),
 * `POST {endpoint}/model/{modelId}/count-tokens` with `{"input": {"converse": ...}}`: the Converse
 * body the codec sends for the request (`ConverseTokensRequest`: messages, system, toolConfig,
 * additionalModelRequestFields), without `inferenceConfig` and sampling; the answer is
 * `{"inputTokens": N}`. Signed as inference is (`signing.ts`, through the runner).
 */
import { countedTokens } from "../answerReaders.ts"
import { type CountTokensHooks, WireProblem } from "../codec.ts"
import { converseBody, type ConverseTarget, modelUrl } from "./converseRequest.ts"

export const bedrockCountTokens: CountTokensHooks<ConverseTarget> = {
  url: (target) => modelUrl(target, "count-tokens"),
  body: (request, call) => {
    const body = converseBody(request, call)
    if (body instanceof WireProblem) return body
    // maxTokens, temperature, topP, stopSequences: the answer's, not the input's
    delete body.inferenceConfig
    const additional = body.additionalModelRequestFields as Record<string, unknown> | undefined
    if (additional !== undefined) {
      const { top_k: _sampling, ...counted } = additional
      if (Object.keys(counted).length > 0) body.additionalModelRequestFields = counted
      else delete body.additionalModelRequestFields
    }
    return { input: { converse: body } }
  },
  parse: (text) => countedTokens(text, "inputTokens")
}
