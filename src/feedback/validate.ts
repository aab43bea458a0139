/**
 * Feedback (spec 4.3): which metric, which target, and whether the value fits. The checks
 * that need no database are here; whether the target exists is asked of the store.
 */
import { isDeepStrictEqual } from "node:util"
import * as Result from "effect/Result"
import type { FeedbackRequest } from "../api/feedback.ts"
import type { FunctionConfig, GatewayConfig } from "../config/types.ts"
import { type GatewayError, InvalidRequest, NotFound } from "../errors.ts"
import { isUuidV7 } from "../inference/prepare.ts"
import { toolCallProblem } from "../inference/toolCalls.ts"
import type { ToolDefinition } from "../inference/types.ts"
import { compileRequestJsonSchema } from "../jsonSchema.ts"
import type { FeedbackKind } from "../analytics/records.ts"
import type { InferenceTarget } from "../analytics/records.ts"

export interface FeedbackPlan {
  readonly kind: FeedbackKind
  readonly metricName: string
  readonly targetType: "inference" | "episode"
  readonly targetId: string
  /** the value as it will be stored (a demonstration is checked once its inference is known) */
  readonly value: unknown
}

const invalid = (message: string): Result.Result<never, InvalidRequest> => Result.fail(new InvalidRequest({ message }))

const describe = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "an array" : typeof value)

export const planFeedback = (request: FeedbackRequest, config: GatewayConfig): Result.Result<FeedbackPlan, GatewayError> => {
  const { inference_id, episode_id, metric_name, value } = request
  if ((inference_id === undefined) === (episode_id === undefined)) {
    return invalid("give exactly one of inference_id or episode_id")
  }
  const targetType = inference_id !== undefined ? "inference" : "episode"
  const targetId = (inference_id ?? episode_id)!
  if (!isUuidV7(targetId)) return invalid(`${targetType}_id: "${targetId}" is not an id issued by the gateway (a UUIDv7)`)

  if (metric_name === "comment") {
    if (typeof value !== "string") return invalid(`value: a comment is a string, got ${describe(value)}`)
    return Result.succeed({ kind: "comment", metricName: metric_name, targetType, targetId, value })
  }
  if (metric_name === "demonstration") {
    if (targetType !== "inference") return invalid("demonstration: give the inference_id of the inference it demonstrates")
    return Result.succeed({ kind: "demonstration", metricName: metric_name, targetType, targetId, value })
  }
  const metric = config.metrics.get(metric_name)
  if (metric === undefined) return Result.fail(new NotFound({ message: `unknown metric "${metric_name}"` }))
  if (metric.level !== targetType) {
    return invalid(`metric "${metric_name}" is an ${metric.level}-level metric: give ${metric.level}_id instead of ${targetType}_id`)
  }
  if (metric.type === "boolean" && typeof value !== "boolean") {
    return invalid(`value: metric "${metric_name}" takes a boolean, got ${describe(value)}`)
  }
  if (metric.type === "float" && (typeof value !== "number" || !Number.isFinite(value))) {
    return invalid(`value: metric "${metric_name}" takes a number, got ${describe(value)}`)
  }
  return Result.succeed({ kind: metric.type, metricName: metric_name, targetType, targetId, value })
}

const chatBlockProblem = (
  block: unknown,
  index: number,
  tools: ReadonlyMap<string, ToolDefinition>
): string | undefined => {
  const path = `value[${index}]`
  if (typeof block !== "object" || block === null) return `${path}: a content block is an object`
  const { type } = block as { type?: unknown }
  if (type === "text") {
    const { text, ...rest } = block as Record<string, unknown>
    if (typeof text !== "string") return `${path}.text: a string is required`
    const extra = Object.keys(rest).filter((key) => key !== "type")
    return extra.length > 0 ? `${path}.${extra[0]}: unknown field` : undefined
  }
  if (type === "tool_call") {
    const { name, arguments: args } = block as Record<string, unknown>
    return toolCallProblem(name, args, tools, path)
  }
  return `${path}.type: a demonstration holds "text" and "tool_call" blocks`
}

/**
 * A demonstration is a valid output of the inference's function: text or tool calls (of the
 * function's tools, with arguments that fit) for chat, JSON that fits the output schema for
 * json. Returns the value to store, or the problem.
 */
export const checkDemonstration = (
  value: unknown,
  target: InferenceTarget,
  fn: FunctionConfig | undefined,
  config: GatewayConfig
): { readonly value: unknown } | { readonly problem: string } => {
  if (target.functionType === "json") {
    const schema = target.outputSchema ?? fn?.outputSchema?.schema
    if (schema !== undefined) {
      // the function's configured schema keeps its own validator (native patterns); any other
      // schema came with the inference request and is checked as request schemas are
      const configured = fn?.outputSchema
      const compiled = configured !== undefined && isDeepStrictEqual(schema, configured.schema)
        ? { validator: configured }
        : compileRequestJsonSchema(schema)
      if ("error" in compiled) return { problem: `value: cannot be checked against the inference's output schema: ${compiled.error}` }
      const problems = compiled.validator.validate(value)
      if (problems !== undefined) return { problem: `value: does not fit the output schema: ${problems.join("; ")}` }
    }
    return { value }
  }
  if (typeof value === "string") return { value: [{ type: "text", text: value }] }
  if (!Array.isArray(value)) return { problem: `value: a chat demonstration is a string or a list of content blocks, got ${describe(value)}` }
  const tools = new Map<string, ToolDefinition>()
  for (const name of fn?.tools ?? []) {
    const tool = config.tools.get(name)
    if (tool !== undefined) tools.set(tool.name, tool)
  }
  for (let i = 0; i < value.length; i++) {
    const problem = chatBlockProblem(value[i], i, tools)
    if (problem !== undefined) return { problem }
  }
  return { value }
}
