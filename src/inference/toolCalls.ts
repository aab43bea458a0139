/**
 * A tool call a caller wrote (a feedback demonstration, a datapoint's output) checked against
 * the tools offered: unlike a model's (output.ts), which is kept with a null name or arguments
 * when invalid, it is refused with the field at fault.
 */
import type { ToolDefinition } from "./types.ts"

/** Why `name` and `args` are not a call of one of `tools` (by the name models call them), or undefined; `path` names the block. */
export const toolCallProblem = (
  name: unknown,
  args: unknown,
  tools: ReadonlyMap<string, ToolDefinition>,
  path: string
): string | undefined => {
  if (typeof name !== "string") return `${path}.name: a string is required`
  const tool = tools.get(name)
  if (tool === undefined) return `${path}.name: "${name}" is not a tool of this function`
  const problems = tool.validator.validate(args)
  return problems === undefined ? undefined : `${path}.arguments: do not fit the parameters of "${name}": ${problems.join("; ")}`
}
