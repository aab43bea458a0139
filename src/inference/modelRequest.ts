/**
 * The request of one model call: the input rendered with a variant's templates, its parameters
 * (the request's `params.chat_completion` over the variant's), the tools, the output schema and
 * the provider tools of the prepared inference.
 */
import type { ModelCallConfig } from "../config/types.ts"
import type { RenderedInput } from "./input.ts"
import type { PreparedInference } from "./prepare.ts"
import type { ModelRequest } from "./types.ts"

export const buildModelRequest = (
  prepared: PreparedInference,
  variant: ModelCallConfig,
  rendered: RenderedInput
): ModelRequest => {
  let params = variant.params
  let jsonMode = variant.jsonMode
  if (prepared.params !== undefined) {
    const { json_mode, ...overrides } = prepared.params
    params = { ...params, ...overrides }
    if (json_mode !== undefined) jsonMode = json_mode
  }
  return {
    system: rendered.system,
    systemCacheControl: prepared.systemCacheControl,
    messages: rendered.messages,
    params,
    tools: prepared.tools,
    functionType: prepared.fn.type,
    jsonMode,
    outputSchema: prepared.outputSchema?.schema ?? prepared.responseSchema,
    providerTools: prepared.providerTools
  }
}
