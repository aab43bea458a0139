import * as v8 from "node:v8"
import * as vm from "node:vm"
import { describe, expect, it } from "vitest"
import {
  acceptAnything,
  compileJsonSchema,
  compileRequestJsonSchema,
  maxRequestPatternProgramSize,
  maxRequestSchemaDepth,
  maxRequestSchemaKeywords,
  maxRequestSchemaLength,
  maxRequestSchemaRefTargets,
  maxRequestSchemaValidationWork,
  maxRequestSubschemas,
  requestSchemaCacheEntries,
  requestSchemaCacheLength,
  requestSchemaCacheUsage
} from "../../src/jsonSchema.ts"
import { estimatedProgramSize } from "../../src/jsonSchema/linearRegExp.ts"

const validatorOf = (schema: unknown) => {
  const compiled = compileJsonSchema(schema)
  if ("error" in compiled) throw new Error(compiled.error)
  return compiled.validator
}

describe("compileJsonSchema", () => {
  it("compiles a draft-07 schema into a validator that explains each problem with its path", () => {
    const validator = validatorOf({
      type: "object",
      properties: { name: { type: "string" }, age: { type: "integer", minimum: 0 } },
      required: ["name"]
    })
    expect(validator.validate({ name: "Ada", age: 36 })).toBeUndefined()
    const problems = validator.validate({ age: -1 })!
    expect(problems).toHaveLength(2)
    expect(problems.some((problem) => problem.startsWith("(root)") && problem.includes("name"))).toBe(true)
    expect(problems.some((problem) => problem.startsWith("/age"))).toBe(true)
    expect(validator.validate("text")).toEqual(["(root) must be object"])
  })

  it("keeps the schema it compiled", () => {
    const schema = { type: "array", items: { type: "number" } }
    expect(validatorOf(schema).schema).toEqual(schema)
  })

  it("reports an invalid schema", () => {
    const compiled = compileJsonSchema({ type: "nonsense" })
    expect("error" in compiled && compiled.error).toMatch(/type/)
    expect(compileJsonSchema({ properties: { a: { minimum: "zero" } } })).toHaveProperty("error")
  })

  it("reports a schema that is not an object", () => {
    expect(compileJsonSchema([])).toEqual({ error: "a JSON Schema must be an object" })
    expect(compileJsonSchema("schema")).toEqual({ error: "a JSON Schema must be an object" })
    expect(compileJsonSchema(null)).toEqual({ error: "a JSON Schema must be an object" })
  })

  it("compiles the same schema twice (ajv does not keep it)", () => {
    const schema = { $id: "https://example.com/s.json", type: "string" }
    expect(validatorOf(schema).validate("x")).toBeUndefined()
    expect(validatorOf(schema).validate(1)).toBeDefined()
  })

  it("does not check formats, and allows unknown keywords", () => {
    expect(validatorOf({ type: "string", format: "email" }).validate("not an email")).toBeUndefined()
    expect(validatorOf({ type: "string", "x-vendor": true }).validate("x")).toBeUndefined()
  })
})

describe("compileRequestJsonSchema", () => {
  it("returns the same validator for the same schema", () => {
    const first = compileRequestJsonSchema({ type: "object", required: ["cached"] })
    const second = compileRequestJsonSchema({ type: "object", required: ["cached"] })
    if ("error" in first || "error" in second) throw new Error("expected validators")
    expect(second.validator).toBe(first.validator)
    expect(first.validator.validate({})).toBeDefined()
    expect(first.validator.validate({ cached: 1 })).toBeUndefined()
  })

  it("returns another validator for another schema", () => {
    const a = compileRequestJsonSchema({ type: "string" })
    const b = compileRequestJsonSchema({ type: "number" })
    if ("error" in a || "error" in b) throw new Error("expected validators")
    expect(a.validator).not.toBe(b.validator)
    expect(b.validator.validate(1)).toBeUndefined()
    expect(b.validator.validate("1")).toBeDefined()
  })

  it("reports an invalid schema each time", () => {
    expect(compileRequestJsonSchema({ type: 42 })).toHaveProperty("error")
    expect(compileRequestJsonSchema({ type: 42 })).toHaveProperty("error")
  })

  it("keeps working beyond the size of its cache", () => {
    for (let i = 0; i < 300; i++) {
      const compiled = compileRequestJsonSchema({ type: "object", required: [`k${i}`] })
      if ("error" in compiled) throw new Error(compiled.error)
      expect(compiled.validator.validate({ [`k${i}`]: 1 })).toBeUndefined()
      expect(compiled.validator.validate({})).toBeDefined()
    }
  })
})

const requestValidator = (schema: unknown) => {
  const compiled = compileRequestJsonSchema(schema)
  if ("error" in compiled) throw new Error(compiled.error)
  return compiled.validator
}
const requestError = (schema: unknown) => {
  const compiled = compileRequestJsonSchema(schema)
  if (!("error" in compiled)) throw new Error("expected the schema to be refused")
  return compiled.error
}

describe("compileRequestJsonSchema: patterns run on a linear-time engine", () => {
  it("matches ^(a|a)+$ against long values at once, right either way", () => {
    const validator = requestValidator({ type: "string", pattern: "^(a|a)+$" })
    // a backtracking engine takes seconds for 30 characters and doubles with each more
    expect(validator.validate("a".repeat(5000) + "b")).toEqual(['(root) must match pattern "^(a|a)+$"'])
    expect(validator.validate("a".repeat(5000))).toBeUndefined()
  })

  it("checks patternProperties with it too", () => {
    const validator = requestValidator({ type: "object", patternProperties: { "^(x|x)+$": { type: "number" } } })
    expect(validator.validate({ ["x".repeat(3000)]: 1 })).toBeUndefined()
    expect(validator.validate({ ["x".repeat(3000)]: "one" })).toHaveLength(1)
  })

  it("keeps ECMAScript escapes and common syntax", () => {
    expect(requestValidator({ type: "string", pattern: "^\\u0041\\d{2}$" }).validate("A12")).toBeUndefined()
    expect(requestValidator({ type: "string", pattern: "^(?<year>\\d{4})-[a-z]+$" }).validate("2024-x")).toBeUndefined()
    expect(requestValidator({ type: "string", pattern: "^\\p{L}+$" }).validate("été")).toBeUndefined()
    expect(requestValidator({ type: "string", pattern: "b" }).validate("abc")).toBeUndefined()
  })

  it("refuses lookaround and backreferences, naming the pattern", () => {
    for (const pattern of ["^(?=a)a$", "(?<!x)a", "(a)\\1"]) {
      expect(requestError({ type: "string", pattern })).toContain(
        `pattern ${JSON.stringify(pattern)}: not supported (patterns in request schemas run on a linear-time engine: no backreferences or lookaround)`
      )
    }
  })

  it("refuses a pattern whose program is too large before compiling it", () => {
    expect(estimatedProgramSize("^[a-zA-Z0-9_-]{1,64}$")).toBeLessThan(200)
    expect(estimatedProgramSize("(\\p{L}|\\p{N}){300}")).toBeGreaterThan(maxRequestPatternProgramSize)
    expect(requestError({ type: "string", pattern: "a{600}b{600}" })).toMatch(/^pattern "a\{600\}b\{600\}": too large/)
  })

  it("leaves configured schemas on the native engine", () => {
    const configured = compileJsonSchema({ type: "string", pattern: "^(?=a)\\w+$" })
    if ("error" in configured) throw new Error(configured.error)
    expect(configured.validator.validate("abc")).toBeUndefined()
    expect(configured.validator.validate("bcd")).toBeDefined()
  })
})

describe("compileRequestJsonSchema: bounds before compiling", () => {
  const properties = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`p${i}`, { type: "string" }]))

  it("refuses too many subschemas, and quickly for a huge schema", () => {
    expect(requestError({ type: "object", properties: properties(15_000) })).toBe(
      `the schema has more than ${maxRequestSubschemas} subschemas`
    )
    requestValidator({ type: "object", properties: properties(maxRequestSubschemas - 1) })
  })

  it("refuses subschemas nested too deep", () => {
    let schema: unknown = { type: "string" }
    for (let i = 0; i < maxRequestSchemaDepth; i++) schema = { type: "array", items: schema }
    expect(requestError(schema)).toBe(`the schema nests subschemas more than ${maxRequestSchemaDepth} deep`)
  })

  it("refuses a schema longer than the limit, however its length is made", () => {
    expect(requestError({ type: "string", description: "x".repeat(maxRequestSchemaLength) })).toBe(
      `the schema is longer than ${maxRequestSchemaLength} characters of JSON`
    )
    expect(requestError({ enum: Array.from({ length: maxRequestSchemaLength / 4 }, (_, i) => i) })).toMatch(/is longer than/)
  })

  it("refuses too many keywords, but not long annotations", () => {
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, { type: "string", minLength: 1, maxLength: 9, pattern: "^a", minimum: 0, maximum: 9, multipleOf: 1, maxItems: 3, minItems: 0, const: "a", not: { const: "b" } }]))
    expect(requestError({ type: "object", properties: many })).toBe(
      `the schema has more than ${maxRequestSchemaKeywords} keywords (besides annotations such as description)`
    )
    requestValidator({ type: "string", description: "d".repeat(maxRequestSchemaLength / 2), title: "t" })
  })

  it("takes local references to subschemas only", () => {
    const definitions = { name: { type: "string" } }
    expect(requestValidator({ definitions, properties: { a: { $ref: "#/definitions/name" } } }).validate({ a: 1 })).toHaveLength(1)
    expect(requestValidator({ type: "array", items: { $ref: "#" } }).validate([[[]], [1]])).toHaveLength(1)
    expect(requestError({ $ref: "https://example.com/schema.json" })).toMatch(/^\$ref "https:\/\/example.com\/schema.json": only references within the schema/)
    expect(requestError({ enum: [{ type: "string" }], $ref: "#/enum/0" })).toBe('$ref "#/enum/0": does not point to a subschema')
    expect(requestError({ properties: { a: { $id: "inner", type: "string" } } })).toBe("$id: only the root schema may have an $id")
    const targets = Object.fromEntries(Array.from({ length: maxRequestSchemaRefTargets + 1 }, (_, i) => [`d${i}`, { type: "string" }]))
    expect(requestError({ definitions: targets, anyOf: Object.keys(targets).map((name) => ({ $ref: `#/definitions/${name}` })) })).toBe(
      `the schema's $refs point to more than ${maxRequestSchemaRefTargets} distinct subschemas`
    )
  })

  it("reports a schema that is not valid draft-07", () => {
    expect(requestError({ type: "nonsense" })).toMatch(/^invalid JSON Schema: /)
    expect(requestError("schema")).toBe("invalid JSON Schema: a JSON Schema must be an object")
  })

  it("keeps the client's schema as it came (the gateway's bookkeeping is in a copy)", () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, "x-gateway-work": false }
    const validator = requestValidator(schema)
    expect(validator.schema).toBe(schema)
    expect(JSON.stringify(validator.schema)).toBe('{"type":"object","properties":{"a":{"type":"string"}},"x-gateway-work":false}')
    expect(validator.validate({ a: 1 })).toHaveLength(1)
  })
})

describe("compileRequestJsonSchema: a budget of work per validation", () => {
  it("stops a schema whose references multiply the work (2^30 applications of one subschema)", () => {
    const definitions: Record<string, unknown> = { d30: { type: "string" } }
    for (let i = 0; i < 30; i++) definitions[`d${i}`] = { allOf: [{ $ref: `#/definitions/d${i + 1}` }, { $ref: `#/definitions/d${i + 1}` }] }
    const validator = requestValidator({ definitions, $ref: "#/definitions/d0" })
    const tooCostly = [`(root) is too costly to check against this schema (more than ${maxRequestSchemaValidationWork} units of work)`]
    expect(validator.validate("x")).toEqual(tooCostly)
    // and the next validation starts with a full budget
    expect(requestValidator({ type: "string" }).validate("x")).toBeUndefined()
  })

  it("stops a schema that refers to itself without end", () => {
    expect(requestValidator({ $ref: "#" }).validate("x")?.[0]).toMatch(/^\(root\) (is too costly|cannot be checked)/)
  })

  it("stops many subschemas applied to many values", () => {
    const validator = requestValidator({ type: "array", items: { anyOf: Array.from({ length: 200 }, (_, i) => ({ type: "string", minLength: i + 5 })) } })
    expect(validator.validate(Array.from({ length: 100_000 }, () => "abc"))?.[0]).toMatch(/too costly/)
    expect(validator.validate(["abcdefghij"])).toBeUndefined()
  })

  it("checks uniqueItems in linear time, items equal whatever their key order", () => {
    const validator = requestValidator({ type: "array", uniqueItems: true })
    expect(validator.validate(Array.from({ length: 20_000 }, (_, i) => ({ i, s: `${i}` })))).toBeUndefined()
    expect(validator.validate([{ a: 1, b: [1, 2] }, 2, { b: [1, 2], a: 1 }])).toEqual([
      "(root) must NOT have duplicate items (items ## 0 and 2 are identical)"
    ])
    expect(validator.validate([1, "1", [1], { "1": 1 }])).toBeUndefined()
  })
})

describe("compileRequestJsonSchema: the cache", () => {
  it("is bounded by entries and by the length of the schemas it holds, least recently used out first", () => {
    const kept = requestValidator({ type: "object", required: ["kept"] })
    for (let i = 0; i < requestSchemaCacheEntries - 1; i++) requestValidator({ type: "object", required: [`lru${i}`] })
    // a hit makes it the most recently used: it outlives the next one in
    expect(requestValidator({ type: "object", required: ["kept"] })).toBe(kept)
    requestValidator({ type: "object", required: ["one more"] })
    expect(requestValidator({ type: "object", required: ["kept"] })).toBe(kept)
    expect(requestSchemaCacheUsage().entries).toBeLessThanOrEqual(requestSchemaCacheEntries)
    const long = (i: number) => ({ type: "string", description: `${i}`.padEnd(maxRequestSchemaLength - 100, "x") })
    for (let i = 0; i < 2 * requestSchemaCacheLength / maxRequestSchemaLength; i++) requestValidator(long(i))
    expect(requestSchemaCacheUsage().length).toBeLessThanOrEqual(requestSchemaCacheLength)
  })

  it("keeps memory bounded over thousands of distinct schemas", () => {
    v8.setFlagsFromString("--expose-gc")
    const gc = vm.runInNewContext("gc") as () => void
    const heapAfter = (from: number, count: number) => {
      for (let i = from; i < from + count; i++) {
        const validator = requestValidator({
          type: "object",
          properties: { [`name${i}`]: { type: "string", pattern: `^n${i}[a-z]*$` }, size: { type: "integer", minimum: i } },
          required: [`name${i}`]
        })
        expect(validator.validate({ [`name${i}`]: `n${i}abc`, size: i })).toBeUndefined()
      }
      gc()
      gc()
      return process.memoryUsage().heapUsed
    }
    const start = heapAfter(0, 100)
    const first = heapAfter(100, 1000)
    const second = heapAfter(1100, 1000)
    // the first 1000 fill the cache; the next 1000 replace them and add (almost) nothing
    expect(second - first).toBeLessThan(Math.max((first - start) / 4, 4 * 1024 * 1024))
  })
})

describe("acceptAnything", () => {
  it("accepts every value", () => {
    for (const value of [null, 1, "x", [], {}]) expect(acceptAnything.validate(value)).toBeUndefined()
  })
})
