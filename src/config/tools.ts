/** `[tools.<name>]` -> tool definitions, each with its parameters' JSON Schema compiled once. */
import type { ToolDefinition } from "../inference/types.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import { RawTool } from "./raw.ts"

const decodeTool = tableDecoder(RawTool)

export const buildTools = (context: BuildContext, tables: Readonly<Record<string, unknown>>): Map<string, ToolDefinition> => {
  const tools = new Map<string, ToolDefinition>()
  for (const [name, table] of Object.entries(tables)) {
    const keyPath = ["tools", name]
    const tool = context.decodeAt(decodeTool, table, keyPath)
    if (tool === undefined) continue
    const validator = context.readJsonSchema([...keyPath, "parameters"], tool.parameters)
    if (validator === undefined) continue
    tools.set(name, {
      name: tool.name ?? name,
      description: tool.description,
      parameters: validator.schema,
      strict: tool.strict ?? false,
      validator
    })
  }
  return tools
}
