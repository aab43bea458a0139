/**
 * The shape of a JSON Schema that came with a request, checked before ajv sees it: its size,
 * how many subschemas it has, how deep they nest, and where its `$ref`s point. The walk stops
 * at the first limit passed, so a huge schema costs no more than one at the limits.
 */
import { workKeyword } from "./workMeter.ts"

export interface RequestSchemaLimits {
  /** characters of the schema's JSON text */
  readonly maxLength: number
  /** subschemas, the root included */
  readonly maxSubschemas: number
  /** keywords that validate (annotations such as `description` aside): ajv generates code for each */
  readonly maxKeywords: number
  /** subschemas nested in one another (the root is at depth 1); literals nest no deeper either */
  readonly maxDepth: number
  /** distinct subschemas `$ref`s point to */
  readonly maxRefTargets: number
}

/** Where a value sits in a schema: a subschema, a map of subschemas, a list of them, or data. */
type Position = "schema" | "map" | "list" | "literal"

// values of these keywords are data (compared with the validated value, or property names), never subschemas
const literalKeywords = new Set(["enum", "const", "default", "examples", "dependentRequired"])
// keywords whose value maps names to subschemas
const mapKeywords = new Set(["properties", "patternProperties", "definitions", "$defs", "dependencies", "dependentSchemas"])
// keywords that only annotate: a subschema with nothing else costs nothing to apply
const annotations = new Set([
  "title", "description", "$comment", "default", "examples", "readOnly", "writeOnly", "deprecated",
  "$id", "id", "$schema", "$anchor", "$vocabulary", "definitions", "$defs", "format"
])
// references resolved while validating (2019-09 and 2020-12): ajv would compile a function per
// anchor they may reach, outside the bound on `$ref` targets; clients do not generate them
const dynamicReferences = new Set(["$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor"])

/**
 * The position of `value`, found under `key` in a value at position `parent`. Keywords the
 * gateway does not know count as subschemas: ajv may compile them when a `$ref` points there.
 */
const positionOf = (parent: Position, key: string, value: unknown): Position => {
  switch (parent) {
    case "literal":
      return "literal"
    case "list":
      return "schema"
    case "map":
      return Array.isArray(value) ? "literal" : "schema"
    case "schema":
      if (literalKeywords.has(key)) return "literal"
      if (mapKeywords.has(key)) return "map"
      return Array.isArray(value) ? "list" : "schema"
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The tokens of a `$ref` that points into the same schema (`#` or `#/...`), or undefined. */
const pointerTokens = (ref: string): ReadonlyArray<string> | undefined => {
  if (ref === "#") return []
  if (!ref.startsWith("#/")) return undefined
  try {
    return ref.slice(2).split("/").map((token) => decodeURIComponent(token).replaceAll("~1", "/").replaceAll("~0", "~"))
  } catch {
    return undefined
  }
}

/** Whether a pointer lands on a subschema (not in data such as an `enum`); undefined when it lands nowhere. */
const pointsToSubschema = (root: unknown, tokens: ReadonlyArray<string>): boolean | undefined => {
  let node = root
  let position: Position = "schema"
  for (const token of tokens) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, token)) return undefined
    const next = (node as Record<string, unknown>)[token]
    position = positionOf(position, token, next)
    node = next
  }
  return position === "schema"
}

/**
 * What is wrong with the shape of a request schema, or undefined. Every `$ref` must point
 * into the schema itself, at a subschema (ajv fetches nothing; a pointer into an `enum` would
 * make ajv compile data as a schema the gateway has not bounded); only the root may have an
 * `$id` (an inner one would change what those pointers mean).
 */
export const requestSchemaProblem = (schema: unknown, limits: RequestSchemaLimits): string | undefined => {
  let length = 0
  let subschemas = 0
  let keywords = 0
  const refs: Array<string> = []
  // `length` is a lower bound of the JSON text's while walking, so the walk stops early on a huge schema
  const visit = (value: unknown, position: Position, depth: number, literalDepth: number): string | undefined => {
    if (position === "schema" && (typeof value === "boolean" || isObject(value))) {
      if (++subschemas > limits.maxSubschemas) return `the schema has more than ${limits.maxSubschemas} subschemas`
      if (depth > limits.maxDepth) return `the schema nests subschemas more than ${limits.maxDepth} deep`
    }
    if (literalDepth > limits.maxDepth) return `the schema nests values more than ${limits.maxDepth} deep`
    if (typeof value === "string") length += value.length + 2
    else if (typeof value !== "object" || value === null) length += 1
    else {
      length += 2
      const nextDepth = position === "schema" ? depth + 1 : depth
      const nextLiteralDepth = position === "literal" ? literalDepth + 1 : literalDepth
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          length += 1
          const problem = visit(value[i], positionOf(position, String(i), value[i]), nextDepth, nextLiteralDepth)
          if (problem !== undefined) return problem
        }
      } else {
        for (const key in value) {
          const child = (value as Record<string, unknown>)[key]
          length += key.length + 4
          if (position === "schema") {
            if (!annotations.has(key) && ++keywords > limits.maxKeywords) {
              return `the schema has more than ${limits.maxKeywords} keywords (besides annotations such as description)`
            }
            if (key === "$ref") {
              if (typeof child !== "string") return "$ref: a reference is a string"
              refs.push(child)
            }
            if (key === "$id" && depth > 1) return "$id: only the root schema may have an $id"
            if (dynamicReferences.has(key)) return `${key}: dynamic references are not supported in request schemas`
          }
          const problem = visit(child, positionOf(position, key, child), nextDepth, nextLiteralDepth)
          if (problem !== undefined) return problem
        }
      }
    }
    if (length > limits.maxLength) return `the schema is longer than ${limits.maxLength} characters of JSON`
    return undefined
  }
  const problem = visit(schema, "schema", 1, 0)
  if (problem !== undefined) return problem
  if (new Set(refs).size > limits.maxRefTargets) {
    return `the schema's $refs point to more than ${limits.maxRefTargets} distinct subschemas`
  }
  for (const ref of refs) {
    const tokens = pointerTokens(ref)
    if (tokens === undefined) {
      return `$ref ${JSON.stringify(ref)}: only references within the schema ("#" or "#/...") are supported`
    }
    if (pointsToSubschema(schema, tokens) === false) return `$ref ${JSON.stringify(ref)}: does not point to a subschema`
  }
  return undefined
}

/**
 * The copy of a request schema that ajv compiles: each subschema that validates something
 * carries the keyword that charges its work to the meter (and a client's own use of that
 * keyword is dropped). The schema must have passed `requestSchemaProblem`.
 */
export const meteredCopy = (value: unknown, position: Position = "schema"): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) return value.map((item, i) => meteredCopy(item, positionOf(position, String(i), item)))
  if (position === "literal") return value
  const copy: Record<string, unknown> = {}
  let validates = false
  for (const key in value) {
    if (position === "schema" && key === workKeyword) continue
    const child = (value as Record<string, unknown>)[key]
    copy[key] = meteredCopy(child, positionOf(position, key, child))
    if (position === "schema" && !annotations.has(key)) validates = true
  }
  if (validates) copy[workKeyword] = true
  return copy
}
