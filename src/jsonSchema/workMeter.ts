/**
 * A budget of work for one validation against a schema that came with a request. Ajv's
 * generated code cannot be interrupted, and the cost of a validation is the size of the data
 * times the work each subschema does on it, so a small schema can still cost a lot: two
 * `$ref`s to the same definition in an `allOf`, thirty levels deep, run 2^30 times on one
 * value. Each subschema of a request schema carries a keyword (added to the copy ajv compiles)
 * that charges its work to this meter; past the budget the validation stops with
 * `WorkBudgetExceeded`. Validation is synchronous, so one meter serves every validator.
 */
import { _, type Ajv, type KeywordCxt } from "ajv"

export class WorkBudgetExceeded extends Error {
  constructor() {
    super("validation exceeded its work budget")
  }
}

let left = 0

/** Starts a validation with `budget` units of work. */
export const startMetering = (budget: number): void => {
  left = budget
}

/** Charges `units` to the current validation; throws past its budget. */
export const charge = (units: number): void => {
  left -= units
  if (left < 0) throw new WorkBudgetExceeded()
}

/** About how long a unit of work takes at worst, to charge work that is timed rather than counted. */
export const nanosecondsPerUnit = 10

/**
 * Runs `work`, whose cost is at most `worstUnits` but usually far less (a pattern on RE2's
 * fast path), and charges the time it took. It does not start when even its worst case would
 * pass the budget, so a validation never runs past its budget by more than the budget.
 */
export const chargeTimed = <A>(worstUnits: number, work: () => A): A => {
  if (worstUnits > left) throw new WorkBudgetExceeded()
  const start = performance.now()
  const result = work()
  charge(Math.ceil((performance.now() - start) * 1_000_000 / nanosecondsPerUnit))
  return result
}

/** The keyword the gateway adds to each subschema of a request schema (stripped from input). */
export const workKeyword = "x-gateway-work"

// cost units: one is about what matching one character against one instruction of a pattern
// costs in the worst case (measured: 10-20 ns); a subschema applied to a value costs a few
const perSubschema = 4
const perKeyword = 8
const perLiteralChars = 64
const perKey = 1
// ...and a key that may fail (additionalProperties, propertyNames): an error costs ~300 ns
const perFailingKey = 24
const perStringChars = 16
// a value of an array's item made into a string to compare it (uniqueItems)
const perValue = 40

// keys that may fail each: additionalProperties, propertyNames, unevaluatedProperties (2019-09 on)
const keyFailing = ["additionalProperties", "propertyNames", "unevaluatedProperties"]
const keyIterating = ["patternProperties", "minProperties", "maxProperties"]
// keywords whose code loops over their own entries
const loopingOverSchema = ["enum", "required", "properties", "patternProperties", "dependencies", "dependentRequired", "dependentSchemas"]
const countOf = (value: unknown): number =>
  Array.isArray(value) ? value.length : typeof value === "object" && value !== null ? Object.keys(value).length : 0

/** Charges applying a subschema that loops over the keys of an object or measures a string. */
const chargeByValue = (fixed: number, byKeys: number, byLength: boolean, data: unknown): void => {
  let units = fixed
  if (byKeys > 0 && typeof data === "object" && data !== null && !Array.isArray(data)) {
    for (const _ in data) units += byKeys
  } else if (byLength && typeof data === "string") units += Math.ceil(data.length / perStringChars)
  charge(units)
}

/**
 * The code that charges applying one subschema to a value: a fixed part for the keywords that
 * loop over the schema (enum, required, properties...), and a part that grows with the value
 * for the keywords that loop over its keys or measure its length. Generated inline (a keyword
 * function per subschema makes compiling twice as slow).
 */
const chargeCode = (cxt: KeywordCxt): void => {
  const schema = cxt.parentSchema as Record<string, unknown>
  // each keyword may fail, and an error costs more than a check
  let fixed = perSubschema + perKeyword * Object.keys(schema).length
  for (const keyword of loopingOverSchema) fixed += countOf(schema[keyword])
  if (schema.enum !== undefined || schema.const !== undefined) {
    fixed += Math.ceil(JSON.stringify([schema.enum, schema.const]).length / perLiteralChars)
  }
  const byKeys = keyFailing.some((keyword) => schema[keyword] !== undefined)
    ? perFailingKey
    : keyIterating.some((keyword) => schema[keyword] !== undefined) ? perKey : 0
  const byLength = schema.minLength !== undefined || schema.maxLength !== undefined
  if (byKeys === 0 && !byLength) {
    cxt.gen.code(_`${cxt.gen.scopeValue("func", { ref: charge })}(${fixed})`)
  } else {
    cxt.gen.code(_`${cxt.gen.scopeValue("func", { ref: chargeByValue })}(${fixed}, ${byKeys}, ${byLength}, ${cxt.data})`)
  }
}

/** JSON Schema equality (numbers by value, objects whatever their key order) as a string. */
const canonical = (value: unknown): string => {
  charge(perValue)
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>
    return `{${Object.keys(record).sort().map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(",")}}`
  }
  return JSON.stringify(value)
}

interface UniqueItemsValidator {
  (schema: boolean, data: ReadonlyArray<unknown>): boolean
  errors?: Array<{ keyword: string; message: string; params: Record<string, unknown> }>
}

/** ajv's `uniqueItems` compares every pair of items (n^2); this one hashes each item once. */
const uniqueItems: UniqueItemsValidator = (schema, data) => {
  if (!schema || data.length < 2) return true
  const seen = new Map<string, number>()
  for (let i = 0; i < data.length; i++) {
    const key = canonical(data[i])
    const j = seen.get(key)
    if (j !== undefined) {
      uniqueItems.errors = [{
        keyword: "uniqueItems",
        message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)`,
        params: { i, j }
      }]
      return false
    }
    seen.set(key, i)
  }
  return true
}

/**
 * Replaces ajv's `uniqueItems` with the linear one (metered: start the meter before validating).
 * The meta-schema uses `uniqueItems` too (`required`, `enum`, `type`), so it serves the checker
 * of request schemas as well.
 */
export const useLinearUniqueItems = (ajv: Ajv): void => {
  ajv.removeKeyword("uniqueItems")
  ajv.addKeyword({ keyword: "uniqueItems", type: "array", schemaType: "boolean", validate: uniqueItems })
}

/** Adds the metering keyword and the linear `uniqueItems` to an ajv instance for request schemas. */
export const addMeteredKeywords = (ajv: Ajv): void => {
  ajv.addKeyword({ keyword: workKeyword, schemaType: "boolean", code: chargeCode })
  useLinearUniqueItems(ajv)
}
