/**
 * Decoding a Responses request: in one pass, as a rule. When that fails, the input items and
 * tools are decoded again one by one by their type, so that the 400 names an item of a kind
 * not served (`input[3]: items of type "web_search_call" are not served`) or the field at fault
 * in one of a known kind (`input[3].arguments: missing field`): a union's failure names
 * neither well. The second pass costs only a request that is refused.
 */
import * as Result from "effect/Result"
import { type Decoded, formatFieldIssues, makeLenientDecoder } from "../decode.ts"
import { InvalidRequest } from "../errors.ts"
import { quoted } from "../untrusted.ts"
import { CreateResponseBody, CreateResponseRequest, CustomTool, FunctionTool, inputItems } from "./api.ts"

const decodeWhole = makeLenientDecoder(CreateResponseRequest)
const decodeLoose = makeLenientDecoder(CreateResponseBody)

type Decoder = (input: unknown) => Decoded<unknown>

/** each kind of input item's decoder, by its `type` (a message's may be absent) */
const itemDecoders = new Map<string, Decoder>(Object.entries(inputItems).map(([type, schema]) => [type, makeLenientDecoder(schema)]))

/** the function and custom tools' decoders; any other type is a built-in tool, refused by the translation */
const toolDecoders = new Map<string, Decoder>([["function", makeLenientDecoder(FunctionTool)], ["custom", makeLenientDecoder(CustomTool)]])

/** what is wrong with `entry`, decoded alone by its kind's decoder; undefined when nothing is */
const entryProblem = (
  entry: unknown,
  path: string,
  decoders: ReadonlyMap<string, Decoder>,
  defaultType: string | undefined,
  unknownType: ((type: string) => string) | undefined
): string | undefined => {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return `${path}: expected an object`
  const type = (entry as { readonly type?: unknown }).type ?? defaultType
  if (typeof type !== "string") return `${path}.type: expected a string`
  const decode = decoders.get(type)
  if (decode === undefined) return unknownType === undefined ? undefined : `${path}: ${unknownType(type)}`
  const decoded = decode(entry)
  return decoded.ok ? undefined : formatFieldIssues(decoded.issues, [path])
}

const refuse = (message: string) => Result.fail(new InvalidRequest({ message }))

export const decodeCreateResponse = (json: unknown): Result.Result<CreateResponseRequest, InvalidRequest> => {
  const whole = decodeWhole(json)
  if (whole.ok) return Result.succeed(whole.value)
  const loose = decodeLoose(json)
  if (!loose.ok) return refuse(formatFieldIssues(loose.issues))
  const { input, tools } = loose.value
  if (Array.isArray(input)) {
    for (const [i, item] of input.entries()) {
      const problem = entryProblem(item, `input[${i}]`, itemDecoders, "message", (type) => `items of type ${quoted(type)} are not served`)
      if (problem !== undefined) return refuse(problem)
    }
  }
  for (const [i, tool] of (tools ?? []).entries()) {
    const problem = entryProblem(tool, `tools[${i}]`, toolDecoders, undefined, undefined)
    if (problem !== undefined) return refuse(problem)
  }
  return refuse(formatFieldIssues(whole.issues))
}
