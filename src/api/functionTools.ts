/**
 * A function tool a request offers (the chat route's `tools[].function`, Anthropic's custom
 * tools, the Responses API's function tools) as the gateway's additional tool. Its schema is
 * compiled here to name the surface's field at fault (preparing finds it compiled then); a
 * tool without one takes an object of no properties.
 */
import * as Result from "effect/Result"
import { InvalidRequest } from "../errors.ts"
import { compileRequestJsonSchema } from "../jsonSchema.ts"
import type { InferenceRequest } from "./inference.ts"

export type AdditionalTool = NonNullable<InferenceRequest["additional_tools"]>[number]

export interface FunctionToolFields {
  readonly name: string
  readonly description?: string | null | undefined
  readonly parameters?: Record<string, unknown> | null | undefined
  readonly strict?: boolean | null | undefined
}

/** `tool` as an additional tool, or a 400 naming `schemaField` when its schema does not compile */
export const functionTool = (tool: FunctionToolFields, schemaField: string): Result.Result<AdditionalTool, InvalidRequest> => {
  const parameters = tool.parameters ?? undefined
  if (parameters !== undefined) {
    const compiled = compileRequestJsonSchema(parameters)
    if ("error" in compiled) return Result.fail(new InvalidRequest({ message: `${schemaField}: ${compiled.error}` }))
  }
  return Result.succeed({
    name: tool.name,
    description: tool.description ?? "",
    parameters: parameters ?? { type: "object", properties: {} },
    strict: tool.strict ?? undefined
  })
}
