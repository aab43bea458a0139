/**
 * JSON Schema -> the Schema object Gemini takes in `responseSchema` and in a function
 * declaration's `parameters`: a subset of OpenAPI 3.0 (ai.google.dev/api/caching#Schema).
 * Keywords outside the subset (`additionalProperties`, `$schema`, `$id`, `strict`...) make
 * Gemini refuse the request, so they are left out; a type list with "null" becomes `nullable`;
 * `const` becomes a one-value `enum`. References (`$ref`) cannot be expressed: refused, naming
 * where they are.
 */
import { WireProblem } from "../codec.ts"

type Json = Record<string, unknown>

/** the keywords of Gemini's Schema that a JSON Schema writes the same way */
const kept = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "propertyOrdering",
  "default",
  "minimum",
  "maximum",
  "required"
])

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** `schema` in Gemini's subset, or a problem naming the JSON Pointer of what cannot be expressed */
export const geminiSchema = (schema: unknown, where: string, at = ""): Json | WireProblem => {
  if (!isObject(schema)) return {}
  if (schema.$ref !== undefined) {
    return new WireProblem(`${where}: Gemini's schema subset has no references ($ref at "${at || "/"}"); inline the definition`)
  }
  const out: Json = {}
  for (const [key, value] of Object.entries(schema)) {
    if (kept.has(key)) out[key] = value
  }
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((type) => type !== "null")
    if (types.length < schema.type.length) out.nullable = true
    if (types.length === 1) out.type = types[0]
    else {
      delete out.type
      out.anyOf = types.map((type) => ({ type }))
    }
  }
  if (schema.const !== undefined && out.enum === undefined) out.enum = [schema.const]
  if (isObject(schema.properties)) {
    const properties: Json = {}
    for (const [name, property] of Object.entries(schema.properties)) {
      const converted = geminiSchema(property, where, `${at}/properties/${name}`)
      if (converted instanceof WireProblem) return converted
      properties[name] = converted
    }
    out.properties = properties
  }
  if (schema.items !== undefined) {
    const items = geminiSchema(schema.items, where, `${at}/items`)
    if (items instanceof WireProblem) return items
    out.items = items
  }
  const alternatives = schema.anyOf ?? schema.oneOf
  if (Array.isArray(alternatives)) {
    const anyOf: Array<Json> = []
    for (const [index, alternative] of alternatives.entries()) {
      const converted = geminiSchema(alternative, where, `${at}/anyOf/${index}`)
      if (converted instanceof WireProblem) return converted
      anyOf.push(converted)
    }
    out.anyOf = anyOf
  }
  return out
}
