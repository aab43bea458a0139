/**
 * Inference input (spec 2.2) -> the rendered system prompt and messages of one variant.
 * Template arguments are validated against the function's schemas; text for a role that
 * has a schema is refused, since the schema is the function's contract with its callers.
 */
import * as Result from "effect/Result"
import type { Input, InputBlock } from "../api/inference.ts"
import type { FunctionConfig, ModelCallConfig } from "../config/types.ts"
import type { JsonSchemaValidator } from "../jsonSchema.ts"
import { type TemplateEngine, templateArgumentsProblem } from "./templates.ts"
import type { RequestBlock, RequestMessage } from "./types.ts"

export interface RenderedInput {
  readonly system?: string | undefined
  readonly messages: ReadonlyArray<RequestMessage>
}

/** A problem with the input: `path` names the field, `message` says what is wrong. */
export interface InputProblem {
  readonly path: string
  readonly message: string
}

type Rendered<A> = Result.Result<A, InputProblem>

const problem = (path: string, message: string) => Result.fail({ path, message })

/** TensorZero's words for input that fails a role's schema, which its clients' tests match on */
const schemaFailed = "JSON Schema validation failed"

const render = (
  engine: TemplateEngine,
  fn: FunctionConfig,
  variant: ModelCallConfig,
  templateName: string,
  args: Record<string, unknown>,
  path: string
): Rendered<string> => {
  // before the schema and the engine, both of which walk the arguments recursively
  const tooBig = templateArgumentsProblem(args)
  if (tooBig !== undefined) return problem(path, tooBig)
  const schema: JsonSchemaValidator | undefined = fn.schemas.get(templateName)
  if (schema !== undefined) {
    const problems = schema.validate(args)
    if (problems !== undefined) return problem(path, `does not fit the ${templateName} schema (${schemaFailed}): ${problems.join("; ")}`)
  }
  const key = variant.templates.get(templateName)
  if (key === undefined) {
    return problem(path, `variant "${variant.name}" has no template "${templateName}" to render these arguments with`)
  }
  const rendered = engine.render(key, args)
  return "error" in rendered ? problem(path, `template "${templateName}" failed to render: ${rendered.error}`) : Result.succeed(rendered.text)
}

/** `text` through the template `variant` wraps its role's plain text with (TensorZero's input wrappers), or as it is */
const wrapped = (engine: TemplateEngine, variant: ModelCallConfig, role: string, text: string, path: string): Rendered<string> => {
  const key = variant.textWrappers?.get(role)
  if (key === undefined) return Result.succeed(text)
  const rendered = engine.render(key, { [`${role}_text`]: text })
  return "error" in rendered ? problem(path, `the ${role} input wrapper failed to render: ${rendered.error}`) : Result.succeed(rendered.text)
}

const renderSystem = (
  input: Input,
  fn: FunctionConfig,
  variant: ModelCallConfig,
  engine: TemplateEngine
): Rendered<string | undefined> => {
  const system = input.system
  if (typeof system === "string") {
    if (fn.schemas.has("system")) {
      return problem("input.system", `the function has a system schema, so system must be an object of template arguments (${schemaFailed})`)
    }
    return wrapped(engine, variant, "system", system, "input.system")
  }
  if (system !== undefined) return render(engine, fn, variant, "system", system, "input.system")
  // no system given: a system template still renders (a fixed system prompt, or one whose schema allows no arguments)
  if (variant.templates.has("system")) return render(engine, fn, variant, "system", {}, "input.system")
  return Result.succeed(undefined)
}

const textBlock = (text: string): RequestBlock => ({ type: "text", text })

const toolArguments = (block: Extract<InputBlock, { type: "tool_call" }>): string => {
  if (block.raw_arguments !== undefined) return block.raw_arguments
  return typeof block.arguments === "string" ? block.arguments : JSON.stringify(block.arguments ?? {})
}

const renderBlock = (
  block: InputBlock,
  role: "user" | "assistant",
  fn: FunctionConfig,
  variant: ModelCallConfig,
  engine: TemplateEngine,
  path: string
): Rendered<RequestBlock> => {
  switch (block.type) {
    case "text": {
      if ((block.text === undefined) === (block.arguments === undefined)) {
        return problem(path, "a text block takes exactly one of text or arguments")
      }
      if (block.arguments !== undefined) {
        return Result.map(render(engine, fn, variant, role, block.arguments, `${path}.arguments`), textBlock)
      }
      if (fn.schemas.has(role)) {
        return problem(`${path}.text`, `the function has a ${role} schema, so this block needs arguments instead of text (${schemaFailed})`)
      }
      const cacheControl = block.cache_control
      return Result.map(
        wrapped(engine, variant, role, block.text!, `${path}.text`),
        cacheControl === undefined ? textBlock : (text): RequestBlock => ({ type: "text", text, cache_control: cacheControl })
      )
    }
    case "template": {
      return Result.map(render(engine, fn, variant, block.name, block.arguments, `${path}.arguments`), textBlock)
    }
    case "raw_text":
      return Result.succeed(textBlock(block.value))
    case "tool_call": {
      const name = block.raw_name ?? block.name
      if (typeof name !== "string") return problem(`${path}.name`, "missing field")
      const call: RequestBlock = { type: "tool_call", id: block.id, name, arguments: toolArguments(block) }
      return Result.succeed(block.cache_control === undefined ? call : { ...call, cache_control: block.cache_control })
    }
    case "tool_result":
      return Result.succeed(block)
    case "file":
      // read from object storage by the inference service before rendering (src/objectStorage/inputFiles.ts)
      if (block.file_type === "object_storage") return problem(`${path}.storage_path`, "a file kept in object storage must be read before rendering")
      return Result.succeed({
        type: "file",
        source: block.file_type === "url"
          ? { kind: "url", url: block.url, mimeType: block.mime_type }
          : { kind: "base64", data: block.data, mimeType: block.mime_type },
        detail: block.detail,
        cache_control: block.cache_control
      })
    case "thought":
      return Result.succeed({ type: "thought", text: block.text, signature: block.signature, providerType: block.provider_type })
    case "unknown":
      return Result.succeed({ type: "unknown", data: block.data, modelProviderName: block.model_provider_name, providerType: block.provider_type })
  }
}

export const renderInput = (
  input: Input,
  fn: FunctionConfig,
  variant: ModelCallConfig,
  engine: TemplateEngine
): Rendered<RenderedInput> => {
  const system = renderSystem(input, fn, variant, engine)
  if (Result.isFailure(system)) return Result.fail(system.failure)
  const messages: Array<RequestMessage> = []
  const inputMessages = input.messages ?? []
  for (let i = 0; i < inputMessages.length; i++) {
    const message = inputMessages[i]
    const path = `input.messages[${i}].content`
    if (typeof message.content === "string") {
      if (fn.schemas.has(message.role)) {
        return problem(path, `the function has a ${message.role} schema, so content must be a list of blocks with arguments (${schemaFailed})`)
      }
      if (variant.textWrappers === undefined) {
        messages.push({ role: message.role, content: [textBlock(message.content)] })
        continue
      }
      const text = wrapped(engine, variant, message.role, message.content, path)
      if (Result.isFailure(text)) return Result.fail(text.failure)
      messages.push({ role: message.role, content: [textBlock(text.success)] })
      continue
    }
    const content: Array<RequestBlock> = []
    for (let j = 0; j < message.content.length; j++) {
      const block = renderBlock(message.content[j], message.role, fn, variant, engine, `${path}[${j}]`)
      if (Result.isFailure(block)) return Result.fail(block.failure)
      content.push(block.success)
    }
    messages.push({ role: message.role, content })
  }
  return Result.succeed({ system: system.success, messages })
}
