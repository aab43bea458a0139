/**
 * `[functions.<name>]` -> functions: their type, the JSON Schemas of their template
 * arguments and output, their tools and tool choice, their variants (`variants.ts`) and
 * their evaluators (`evaluators.ts`).
 */
import type { ToolChoice, ToolDefinition } from "../inference/types.ts"
import type { JsonSchemaValidator } from "../jsonSchema.ts"
import { type BuildContext, tableDecoder } from "./context.ts"
import { buildEvaluators, type EvaluatorsScope } from "./evaluators.ts"
import { buildExperimentation } from "./experimentation.ts"
import type { KeyPath } from "./merge.ts"
import { RawFunction } from "./raw.ts"
import type { FunctionConfig } from "./types.ts"
import { buildVariants } from "./functionVariants.ts"

const decodeFunction = tableDecoder(RawFunction)
const legacyRoles = ["system", "user", "assistant"] as const

export interface FunctionScope extends EvaluatorsScope {
  readonly tools: ReadonlyMap<string, ToolDefinition>
}

const schemasOf = (context: BuildContext, keyPath: KeyPath, fn: RawFunction): Map<string, JsonSchemaValidator> => {
  const schemas = new Map<string, JsonSchemaValidator>()
  for (const role of legacyRoles) {
    const legacy = fn[`${role}_schema`]
    if (legacy === undefined) continue
    if (fn.schemas?.[role] !== undefined) {
      context.report([...keyPath, `${role}_schema`], `both ${role}_schema and schemas.${role} are set; keep schemas.${role}.path`)
      continue
    }
    const validator = context.readJsonSchema([...keyPath, `${role}_schema`], legacy)
    if (validator !== undefined) schemas.set(role, validator)
  }
  for (const [schemaName, entry] of Object.entries(fn.schemas ?? {})) {
    const validator = context.readJsonSchema([...keyPath, "schemas", schemaName, "path"], entry.path)
    if (validator !== undefined) schemas.set(schemaName, validator)
  }
  return schemas
}

/**
 * `tool_choice = { specific = "t" }` need not name one of the function's tools, as in
 * TensorZero: the tool can come with the request (`additional_tools`, `allowed_tools`), so it
 * is looked for per request (`inference/tools.ts`). A configured tool is chosen by the name
 * the model sees, which `name` may set apart from its [tools] key.
 */
const toolChoiceOf = (fn: RawFunction, tools: ReadonlyMap<string, ToolDefinition>): ToolChoice => {
  if (fn.tool_choice === undefined) return { type: "auto" }
  if (typeof fn.tool_choice === "string") return { type: fn.tool_choice }
  return { type: "specific", name: tools.get(fn.tool_choice.specific)?.name ?? fn.tool_choice.specific }
}

const buildFunction = (context: BuildContext, scope: FunctionScope, keyPath: KeyPath, name: string, fn: RawFunction): FunctionConfig => {
  const schemas = schemasOf(context, keyPath, fn)
  let outputSchema: JsonSchemaValidator | undefined
  if (fn.output_schema !== undefined) {
    if (fn.type !== "json") context.report([...keyPath, "output_schema"], "only json functions have an output schema")
    else outputSchema = context.readJsonSchema([...keyPath, "output_schema"], fn.output_schema)
  }
  if (fn.type === "json") {
    for (const field of ["tools", "tool_choice", "parallel_tool_calls"] as const) {
      if (fn[field] !== undefined) context.report([...keyPath, field], "json functions do not take tools; use a chat function")
    }
  }
  const toolNames = fn.tools ?? []
  toolNames.forEach((toolName, index) => {
    if (!scope.tools.has(toolName)) context.report([...keyPath, "tools", index], `tool "${toolName}" is not defined under [tools]`)
  })
  const variants = buildVariants(context, scope, keyPath, name, fn, schemas)
  return {
    name,
    type: fn.type,
    description: fn.description,
    schemas,
    outputSchema,
    tools: toolNames,
    toolChoice: toolChoiceOf(fn, scope.tools),
    parallelToolCalls: fn.parallel_tool_calls,
    variants,
    experimentation: fn.experimentation === undefined
      ? undefined
      : buildExperimentation(context, keyPath, fn.experimentation, variants, Object.values(fn.variants ?? {}).some((table) => table.weight !== undefined)),
    evaluators: buildEvaluators(context, scope, keyPath, { kind: "function", functionName: name }, fn.type, fn.evaluators ?? {})
  }
}

export const buildFunctions = (
  context: BuildContext,
  scope: FunctionScope,
  tables: Readonly<Record<string, unknown>>
): Map<string, FunctionConfig> => {
  const functions = new Map<string, FunctionConfig>()
  for (const [name, table] of Object.entries(tables)) {
    const keyPath = ["functions", name]
    if (name.startsWith("gateway::")) {
      context.report(keyPath, `function names starting with "gateway::" are reserved`)
      continue
    }
    const fn = context.decodeAt(decodeFunction, table, keyPath)
    if (fn !== undefined) functions.set(name, buildFunction(context, scope, keyPath, name, fn))
  }
  return functions
}
