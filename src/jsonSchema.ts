/**
 * JSON Schema (draft-07) validation with ajv. Validators of configured schemas compile once
 * at start-up; schemas that arrive with a request go through a small bounded cache so a
 * client repeating the same schema does not pay for compilation each time.
 */
import { Ajv, type ValidateFunction } from "ajv"

export interface JsonSchemaValidator {
  readonly schema: Record<string, unknown>
  /** `undefined` when the value fits, otherwise one message per problem */
  readonly validate: (value: unknown) => ReadonlyArray<string> | undefined
}

const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false })

const describe = (validate: ValidateFunction): ReadonlyArray<string> =>
  (validate.errors ?? []).map((e) => `${e.instancePath === "" ? "(root)" : e.instancePath} ${e.message ?? "is invalid"}`)

/** Compiles a schema; fails with ajv's explanation when it is not a valid draft-07 schema. */
export const compileJsonSchema = (
  schema: unknown
): { readonly validator: JsonSchemaValidator } | { readonly error: string } => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return { error: "a JSON Schema must be an object" }
  }
  try {
    const validate = ajv.compile(schema)
    // ajv keeps every compiled schema in its own cache; drop it, we keep the function
    ajv.removeSchema(schema)
    return {
      validator: {
        schema: schema as Record<string, unknown>,
        validate: (value) => (validate(value) ? undefined : describe(validate))
      }
    }
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) }
  }
}

const requestSchemaCache = new Map<string, JsonSchemaValidator>()
const requestSchemaCacheSize = 256

/** Compiles a schema sent with a request, reusing the validator of an identical earlier schema. */
export const compileRequestJsonSchema = (
  schema: unknown
): { readonly validator: JsonSchemaValidator } | { readonly error: string } => {
  const key = JSON.stringify(schema)
  const cached = requestSchemaCache.get(key)
  if (cached !== undefined) return { validator: cached }
  const compiled = compileJsonSchema(schema)
  if ("validator" in compiled) {
    if (requestSchemaCache.size >= requestSchemaCacheSize) {
      requestSchemaCache.delete(requestSchemaCache.keys().next().value as string)
    }
    requestSchemaCache.set(key, compiled.validator)
  }
  return compiled
}

/** A validator that accepts any value, for json functions without an output schema. */
export const acceptAnything: JsonSchemaValidator = { schema: {}, validate: () => undefined }
