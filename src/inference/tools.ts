/**
 * The tools of one inference: the function's configured tools, plus `additional_tools`,
 * narrowed by `allowed_tools`, with `tool_choice` and `parallel_tool_calls` (spec 4.1).
 */
import * as Result from "effect/Result"
import type { InferenceRequest } from "../api/inference.ts"
import type { FunctionConfig } from "../config/types.ts"
import { acceptAnything, compileRequestJsonSchema } from "../jsonSchema.ts"
import type { InputProblem } from "./input.ts"
import type { ToolChoice, ToolConfig, ToolDefinition } from "./types.ts"

const hasToolNamed = (tools: ReadonlyMap<string, ToolDefinition>, name: string): boolean => {
  for (const tool of tools.values()) if (tool.name === name) return true
  return false
}

const problem = (path: string, message: string): Result.Result<never, InputProblem> => Result.fail({ path, message })

const missingSpecificTool = (name: string) =>
  problem(
    "tool_choice",
    `the function's tool_choice is { specific = "${name}" }, but no tool "${name}" is available: ` +
      `configure it in the function's tools, or send it in additional_tools or allowed_tools`
  )

/** an OpenAI custom tool (free-text input, optionally a grammar), as the OpenAI-compatible surface passes it */
export interface CustomTool {
  readonly name: string
  readonly description?: string | undefined
  readonly format?: unknown
}

/** whether the tool `name` of an answer is a custom tool (its call's input is free text, not JSON arguments) */
export const isCustomTool = (tools: ToolConfig | undefined, name: string | null): boolean =>
  tools?.tools.some((tool) => tool.name === name && tool.custom !== undefined) === true

export const resolveTools = (
  fn: FunctionConfig,
  request: InferenceRequest,
  configuredTools: ReadonlyMap<string, ToolDefinition>,
  customTools: ReadonlyArray<CustomTool> = []
): Result.Result<ToolConfig | undefined, InputProblem> => {
  if (fn.type === "json") {
    for (const field of ["additional_tools", "allowed_tools", "tool_choice", "parallel_tool_calls"] as const) {
      if (request[field] !== undefined) return problem(field, "json functions do not take tools")
    }
    if (customTools.length > 0) return problem("tools", "json functions do not take tools")
    return Result.succeed(undefined)
  }
  const byName = new Map<string, ToolDefinition>()
  for (const name of fn.tools) byName.set(name, configuredTools.get(name)!)
  const additional = request.additional_tools ?? []
  for (let i = 0; i < additional.length; i++) {
    const tool = additional[i]
    if (byName.has(tool.name)) {
      return problem(`additional_tools[${i}].name`, `a tool named "${tool.name}" is already available`)
    }
    const compiled = compileRequestJsonSchema(tool.parameters)
    if ("error" in compiled) return problem(`additional_tools[${i}].parameters`, compiled.error)
    byName.set(tool.name, {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: tool.strict ?? false,
      validator: compiled.validator,
      cacheControl: tool.cache_control
    })
  }
  for (let i = 0; i < customTools.length; i++) {
    const tool = customTools[i]
    if (byName.has(tool.name)) return problem(`tools[${i}]`, `a tool named "${tool.name}" is already available`)
    byName.set(tool.name, {
      name: tool.name,
      description: tool.description ?? "",
      parameters: {},
      strict: false,
      validator: acceptAnything,
      custom: { format: tool.format }
    })
  }
  let allowed: Array<string> | undefined
  if (request.allowed_tools !== undefined) {
    allowed = []
    for (let i = 0; i < request.allowed_tools.length; i++) {
      const name = request.allowed_tools[i]
      // a configured tool the function does not list becomes available by being allowed
      const tool = byName.get(name) ?? configuredTools.get(name)
      if (tool === undefined) {
        return problem(`allowed_tools[${i}]`, `unknown tool "${name}": not in [tools] nor in additional_tools`)
      }
      byName.set(name, tool)
      allowed.push(tool.name)
    }
  }
  if (byName.size === 0) {
    if (request.tool_choice !== undefined && request.tool_choice !== "none" && request.tool_choice !== "auto") {
      return problem("tool_choice", "no tools are available to choose from")
    }
    if (request.tool_choice === undefined && fn.toolChoice.type === "specific") return missingSpecificTool(fn.toolChoice.name)
    return Result.succeed(undefined)
  }
  let choice: ToolChoice = fn.toolChoice
  if (request.tool_choice === undefined) {
    // the function's own choice may name a tool only a request brings (as in TensorZero): it must be here now
    if (choice.type === "specific" && !hasToolNamed(byName, choice.name)) return missingSpecificTool(choice.name)
  } else {
    const requested = request.tool_choice
    if (typeof requested === "string") choice = { type: requested }
    else {
      const tool = byName.get(requested.specific)
      if (tool === undefined) {
        return problem("tool_choice.specific", `unknown tool "${requested.specific}": not among the available tools`)
      }
      choice = { type: "specific", name: tool.name }
    }
  }
  return Result.succeed({
    tools: [...byName.values()],
    allowed,
    choice,
    parallelToolCalls: request.parallel_tool_calls ?? fn.parallelToolCalls
  })
}
