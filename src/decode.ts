/**
 * Decoding untrusted data (request bodies, configuration tables) with Schema, turning a
 * failure into one message per problem with the path of the field at fault.
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

export interface FieldIssue {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

const maxMessageLength = 200

export const unknownField = "unknown field"

const leafHook: SchemaIssue.LeafHook = (issue) => {
  if (issue._tag === "UnexpectedKey") return unknownField
  if (issue._tag === "MissingKey") return "missing field"
  return SchemaIssue.defaultLeafHook(issue)
}

// The default wording, minus the noise of optional fields, with rejected values cut short
// (a request can carry megabytes of base64 in one field).
const tidy = (message: string): string => {
  const text = message.replaceAll(" | undefined", "")
  return text.length > maxMessageLength ? `${text.slice(0, maxMessageLength)}...` : text
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({ leafHook })

const toIssues = (error: Schema.SchemaError): ReadonlyArray<FieldIssue> =>
  formatter(error.issue).issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => {
      const key = typeof segment === "object" ? segment.key : segment
      return typeof key === "number" ? key : String(key)
    }),
    message: tidy(issue.message)
  }))

export type Decoded<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly issues: ReadonlyArray<FieldIssue> }

/**
 * Whether decoding dropped a key somewhere: an object of the output with fewer keys than its
 * input. Decoding ignores unknown keys (it strips them), so this tells if any was present.
 */
const droppedKeys = (input: unknown, output: unknown): boolean => {
  if (input === output || typeof input !== "object" || input === null || typeof output !== "object" || output === null) {
    return false
  }
  if (Array.isArray(input)) {
    for (let i = 0; i < input.length; i++) if (droppedKeys(input[i], (output as Array<unknown>)[i])) return true
    return false
  }
  const keys = Object.keys(input)
  if (keys.length !== Object.keys(output).length) return true
  for (const key of keys) {
    if (droppedKeys((input as Record<string, unknown>)[key], (output as Record<string, unknown>)[key])) return true
  }
  return false
}

/**
 * Builds a decoder once (at module load or start-up), for use on every request. Unknown keys
 * are errors. Checking for them inside the decoder more than doubles its cost, so a request is
 * decoded leniently first, and strictly (for the message naming the field) only when the
 * lenient pass failed or dropped a key.
 */
export const makeDecoder = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S
): (input: unknown) => Decoded<S["Type"]> => {
  const lenient = Schema.decodeUnknownResult(schema as any)
  const strict = Schema.decodeUnknownResult(schema as any, { onExcessProperty: "error", errors: "all", reportInput: true })
  return (input) => {
    const quick = lenient(input)
    if (Result.isSuccess(quick) && !droppedKeys(input, quick.success)) return { ok: true, value: quick.success as S["Type"] }
    const result = strict(input)
    return Result.isSuccess(result)
      ? { ok: true, value: result.success as S["Type"] }
      : { ok: false, issues: toIssues(result.failure as Schema.SchemaError) }
  }
}

/**
 * A decoder that ignores unknown keys (for wire formats defined by others, such as OpenAI's,
 * whose clients send fields the gateway has no use for).
 */
export const makeLenientDecoder = <S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S
): (input: unknown) => Decoded<S["Type"]> => {
  const decode = Schema.decodeUnknownResult(schema as any, { errors: "all", reportInput: true })
  return (input) => {
    const result = decode(input)
    return Result.isSuccess(result)
      ? { ok: true, value: result.success as S["Type"] }
      : { ok: false, issues: toIssues(result.failure as Schema.SchemaError) }
  }
}

/** `input.messages[0].content`: how request fields are named in error messages. */
export const formatFieldPath = (path: ReadonlyArray<string | number>): string => {
  let out = ""
  for (const key of path) out += typeof key === "number" ? `[${key}]` : out === "" ? key : `.${key}`
  return out
}

export const formatFieldIssues = (issues: ReadonlyArray<FieldIssue>, prefix: ReadonlyArray<string | number> = []): string =>
  issues.map((issue) => {
    const path = formatFieldPath([...prefix, ...issue.path])
    return path === "" ? issue.message : `${path}: ${issue.message}`
  }).join("; ")
