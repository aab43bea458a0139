/**
 * The arguments of a template from a form generated from their JSON Schema: a field per
 * property, of a kind given by the property's schema (string, number, integer, boolean, enum;
 * anything else JSON). Values are kept as typed (strings, a checkbox's state) and turned into
 * arguments by `schemaArguments`, which names the field at fault. No React: tested on its own.
 */
export type JsonSchema = Readonly<Record<string, unknown>>

/** what each field holds as typed: text, or a checkbox's state */
export type FormValues = Readonly<Record<string, string | boolean>>

export type Kind = "enum" | "string" | "number" | "integer" | "boolean" | "json"

export interface Property {
  readonly name: string
  readonly kind: Kind
  readonly required: boolean
  readonly description?: string
  readonly options: ReadonlyArray<unknown>
}

const kindOf = (schema: JsonSchema): Kind => {
  if (Array.isArray(schema.enum)) return "enum"
  // `["string", "null"]` is a string that may be left out
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((type) => type !== "null")
  if (types.length !== 1) return "json"
  return types[0] === "string" || types[0] === "number" || types[0] === "integer" || types[0] === "boolean" ? types[0] : "json"
}

export const schemaProperties = (schema: JsonSchema): ReadonlyArray<Property> => {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
  const required = new Set(Array.isArray(schema.required) ? schema.required as Array<string> : [])
  return Object.entries(properties).map(([name, property]) => ({
    name,
    kind: kindOf(property ?? {}),
    required: required.has(name),
    ...(typeof property?.description === "string" && { description: property.description }),
    options: Array.isArray(property?.enum) ? property.enum : []
  }))
}

/** the values a new form starts with: unchecked boxes, the first choice of a required enum, empty text */
export const initialValues = (schema: JsonSchema): FormValues =>
  Object.fromEntries(schemaProperties(schema).map((property) => [
    property.name,
    property.kind === "boolean" ? false : property.kind === "enum" && property.required ? "0" : ""
  ]))

/** The arguments the values stand for, or the first problem (naming its field). Empty optional fields are left out. */
export const schemaArguments = (schema: JsonSchema, values: FormValues): { arguments: Record<string, unknown> } | { problem: string } => {
  const result: Record<string, unknown> = {}
  for (const property of schemaProperties(schema)) {
    const value = values[property.name]
    if (property.kind === "boolean") {
      result[property.name] = value === true
      continue
    }
    const text = typeof value === "string" ? value : ""
    if (text === "") {
      if (property.required) return { problem: `${property.name} is required` }
      continue
    }
    switch (property.kind) {
      case "enum":
        result[property.name] = property.options[Number(text)]
        break
      case "string":
        result[property.name] = text
        break
      case "number":
      case "integer": {
        const number = Number(text)
        if (!Number.isFinite(number) || (property.kind === "integer" && !Number.isInteger(number))) {
          return { problem: `${property.name} must be ${property.kind === "integer" ? "an integer" : "a number"}` }
        }
        result[property.name] = number
        break
      }
      case "json":
        try {
          result[property.name] = JSON.parse(text)
        } catch {
          return { problem: `${property.name} must be JSON` }
        }
    }
  }
  return { arguments: result }
}
