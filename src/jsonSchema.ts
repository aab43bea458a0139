/**
 * JSON Schema validation with ajv, in the dialect each schema declares with `$schema`
 * (draft-07, draft-06, 2019-09, 2020-12; draft-07 when it declares none: see
 * `jsonSchema/dialects.ts`). Validators of configured schemas compile once at start-up with
 * the native regular expression engine. Schemas that arrive with a request
 * are untrusted: they are bounded in size before compiling, their patterns run on a
 * linear-time engine, each validation against them has a budget of work, and their compiled
 * validators live in a cache bounded by entries and by the length of the schemas it holds.
 */
import type { Options, ValidateFunction } from "ajv"
import { dialectOf, makeAjv, perDialect } from "./jsonSchema/dialects.ts"
import { linearRegExpEngine, RefusedPattern, shrinkPatterns } from "./jsonSchema/linearRegExp.ts"
import { meteredCopy, requestSchemaProblem } from "./jsonSchema/requestShape.ts"
import { addMeteredKeywords, startMetering, useLinearUniqueItems, WorkBudgetExceeded } from "./jsonSchema/workMeter.ts"

export interface JsonSchemaValidator {
  readonly schema: Record<string, unknown>
  /** `undefined` when the value fits, otherwise one message per problem */
  readonly validate: (value: unknown) => ReadonlyArray<string> | undefined
}

export type CompiledJsonSchema = { readonly validator: JsonSchemaValidator } | { readonly error: string }

/** A request schema's JSON text is at most this many characters. */
export const maxRequestSchemaLength = 64 * 1024
/** A request schema has at most this many subschemas (objects or booleans in schema positions), the root included. */
export const maxRequestSubschemas = 256
/** A request schema has at most this many keywords besides annotations (`description`, `title`...): compiling costs ~15 us each. */
export const maxRequestSchemaKeywords = 1000
/** A request schema's `$ref`s point to at most this many distinct subschemas (each compiles to a function of its own). */
export const maxRequestSchemaRefTargets = 64
/** Request subschemas nest at most this deep (the root is at depth 1); literal values too. */
export const maxRequestSchemaDepth = 32
/** The distinct patterns (`pattern`, `patternProperties`) of a request schema hold at most this many characters in all... */
export const maxRequestPatternsLength = 1000
/** ...each compiles to at most this many RE2 instructions... */
export const maxRequestPatternProgramSize = 1000
/** ...and all of them to at most this many. */
export const maxRequestPatternsProgramSize = 3000
/**
 * Units of work one validation against a request schema may take (a unit is about 10 ns):
 * applying a subschema to a value costs a few, plus a few per keyword that may fail, per key
 * of the value it loops over, per item uniqueItems compares; a pattern check costs the time it
 * took, and is not started when its worst case (characters times RE2 instructions) exceeds
 * what is left. Past the budget the value does not fit: ~50-100 ms at most on this machine.
 */
export const maxRequestSchemaValidationWork = 5_000_000
/** The cache of compiled request schemas holds at most this many... */
export const requestSchemaCacheEntries = 256
/** ...and schemas of at most this many characters of JSON in all. */
export const requestSchemaCacheLength = 2 * 1024 * 1024

const options: Options = { allErrors: true, strict: false, validateFormats: false }

// checks schemas against their dialect's meta-schema and compiles nothing else, so it keeps
// nothing of them; checked apart, a `$schema` written another way than ajv's (https, no `#`)
// needs no lookup
const configuredMetaChecker = perDialect((dialect) => makeAjv(dialect, { ...options, validateSchema: false }))

const describe = (validate: ValidateFunction): ReadonlyArray<string> =>
  (validate.errors ?? []).map((e) => `${e.instancePath === "" ? "(root)" : e.instancePath} ${e.message ?? "is invalid"}`)

/**
 * Compiles a schema; fails with ajv's explanation when it is not a valid schema of the dialect it
 * declares. Each schema compiles in an Ajv instance of its own, garbage with its validator: ajv
 * keeps the code it generated for as long as the instance lives (`removeSchema` does not free
 * it), so an instance shared by the configurations a process loads would keep every reloaded
 * configuration's validators. An instance costs under 0.1 ms, a tenth of compiling a small schema.
 */
export const compileJsonSchema = (schema: unknown): CompiledJsonSchema => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return { error: "a JSON Schema must be an object" }
  }
  const dialect = dialectOf(schema as Record<string, unknown>)
  if ("error" in dialect) return dialect
  const checker = configuredMetaChecker(dialect)
  try {
    if (!checker.validate(dialect.metaSchema, schema)) return { error: `schema is invalid: ${checker.errorsText(checker.errors)}` }
    const validate = makeAjv(dialect, { ...options, meta: false, validateSchema: false }).compile(schema)
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

const requestOptions: Options = {
  ...options,
  // each request schema gets its own instance (see compileRequest), checked by `metaChecker`
  meta: false,
  validateSchema: false,
  // inlining copies a referenced subschema at every reference: code as large as the references times the subschema
  inlineRefs: false,
  // ajv's optimizing pass over the generated code triples the time to compile
  code: { optimize: false }
}

// check request schemas against their dialect's meta-schema; they compile nothing else, so keep nothing
const metaChecker = perDialect((dialect) => {
  const checker = makeAjv(dialect, options)
  // the meta-schema's uniqueItems (on `required`, `enum`...) would compare every pair of entries
  useLinearUniqueItems(checker)
  return checker
})

const runMetered = (validate: ValidateFunction, value: unknown): ReadonlyArray<string> | undefined => {
  startMetering(maxRequestSchemaValidationWork)
  try {
    return validate(value) ? undefined : describe(validate)
  } catch (error) {
    if (error instanceof WorkBudgetExceeded) {
      return [`(root) is too costly to check against this schema (more than ${maxRequestSchemaValidationWork} units of work)`]
    }
    // a schema that recurses without consuming the value, or a value nested too deeply for the stack
    if (error instanceof RangeError) return [`(root) cannot be checked against this schema: ${error.message}`]
    throw error
  } finally {
    shrinkPatterns()
  }
}

/**
 * Compiles a request schema in an Ajv instance of its own: ajv keeps everything it compiled
 * (`removeSchema` does not free the generated code), so an instance shared by request schemas
 * would grow without end. A fresh instance costs about 0.1 ms, a small part of a compilation,
 * and becomes garbage with the last validator of it.
 */
const compileRequest = (schema: Record<string, unknown>): CompiledJsonSchema => {
  const dialect = dialectOf(schema)
  if ("error" in dialect) return { error: `invalid JSON Schema: ${dialect.error}` }
  try {
    // the schema's length bounds this work
    startMetering(Number.POSITIVE_INFINITY)
    const checker = metaChecker(dialect)
    if (!checker.validate(dialect.metaSchema, schema)) {
      return { error: `invalid JSON Schema: schema is invalid: ${checker.errorsText(checker.errors)}` }
    }
    const regExp = linearRegExpEngine({
      maxLength: maxRequestPatternsLength,
      maxProgramSize: maxRequestPatternProgramSize,
      maxTotalProgramSize: maxRequestPatternsProgramSize
    })
    const instance = makeAjv(dialect, { ...requestOptions, code: { ...requestOptions.code, regExp } })
    addMeteredKeywords(instance)
    const validate = instance.compile(meteredCopy(schema) as Record<string, unknown>)
    return { validator: { schema, validate: (value) => runMetered(validate, value) } }
  } catch (error) {
    if (error instanceof RefusedPattern) return { error: error.message }
    return { error: `invalid JSON Schema: ${error instanceof Error ? error.message : String(error)}` }
  }
}

interface CacheEntry {
  readonly compiled: CompiledJsonSchema
  readonly length: number
}

// least recently used first (a Map iterates in insertion order; a hit moves its entry last)
const requestSchemaCache = new Map<string, CacheEntry>()
let cachedLength = 0
// the same schema object compiled twice in one request (the OpenAI route checks it, then prepares it)
const byObject = new WeakMap<object, CompiledJsonSchema>()

const remember = (key: string, compiled: CompiledJsonSchema): void => {
  requestSchemaCache.set(key, { compiled, length: key.length })
  cachedLength += key.length
  while (requestSchemaCache.size > requestSchemaCacheEntries || cachedLength > requestSchemaCacheLength) {
    const [oldestKey, oldest] = requestSchemaCache.entries().next().value as [string, CacheEntry]
    requestSchemaCache.delete(oldestKey)
    cachedLength -= oldest.length
  }
}

/**
 * Compiles a schema sent with a request, reusing the outcome for an identical earlier schema.
 * An error reads after the name of the field the schema came in (`output_schema: ...`).
 */
export const compileRequestJsonSchema = (schema: unknown): CompiledJsonSchema => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return { error: "invalid JSON Schema: a JSON Schema must be an object" }
  }
  const known = byObject.get(schema)
  if (known !== undefined) return known
  const problem = requestSchemaProblem(schema, {
    maxLength: maxRequestSchemaLength,
    maxSubschemas: maxRequestSubschemas,
    maxKeywords: maxRequestSchemaKeywords,
    maxDepth: maxRequestSchemaDepth,
    maxRefTargets: maxRequestSchemaRefTargets
  })
  if (problem !== undefined) return { error: problem }
  const key = JSON.stringify(schema)
  if (key.length > maxRequestSchemaLength) {
    return { error: `the schema is longer than ${maxRequestSchemaLength} characters of JSON` }
  }
  const cached = requestSchemaCache.get(key)
  let compiled: CompiledJsonSchema
  if (cached !== undefined) {
    requestSchemaCache.delete(key)
    requestSchemaCache.set(key, cached)
    compiled = cached.compiled
  } else {
    compiled = compileRequest(schema as Record<string, unknown>)
    remember(key, compiled)
  }
  byObject.set(schema, compiled)
  return compiled
}

/** How many compiled request schemas the cache holds, and their length in characters of JSON (for tests). */
export const requestSchemaCacheUsage = (): { readonly entries: number; readonly length: number } => ({
  entries: requestSchemaCache.size,
  length: cachedLength
})

/** A validator that accepts any value, for json functions without an output schema. */
export const acceptAnything: JsonSchemaValidator = { schema: {}, validate: () => undefined }
