import * as v8 from "node:v8"
import * as vm from "node:vm"
import { describe, expect, it } from "vitest"
import { z } from "zod"
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

/** Both ways a schema is compiled: configured (native patterns) and sent with a request (bounded, metered). */
const bothWays = (schema: unknown) => [validatorOf(schema), requestValidator(schema)]

describe("dialects: the $schema a schema declares picks how it is validated", () => {
  const draft2020 = "https://json-schema.org/draft/2020-12/schema"

  it("takes schemas exactly as zod 4 writes them (2020-12)", () => {
    const City = z.object({
      city: z.string().describe("the city"),
      days: z.number().int().min(1).optional(),
      unit: z.enum(["celsius", "fahrenheit"]).nullable()
    })
    const citySchema = z.toJSONSchema(City)
    expect(citySchema.$schema).toBe(draft2020)
    for (const validator of bothWays(citySchema)) {
      expect(validator.validate({ city: "Paris", days: 3, unit: null })).toBeUndefined()
      expect(validator.validate({ city: "Paris", unit: "kelvin" })?.[0]).toBe("/unit must be equal to one of the allowed values")
      expect(validator.validate({ city: "Paris", unit: "celsius", extra: 1 })).toHaveLength(1)
    }

    // tuples are prefixItems in 2020-12 (draft-07's validator would not look at it)
    const pair = z.toJSONSchema(z.tuple([z.string(), z.number()]))
    expect(pair).toHaveProperty("prefixItems")
    for (const validator of bothWays(pair)) {
      expect(validator.validate(["a", 1])).toBeUndefined()
      expect(validator.validate(["a", "b"])).toEqual(["/1 must be number"])
    }

    // a recursive schema refers to its root
    interface Node {
      readonly name: string
      readonly children: ReadonlyArray<Node>
    }
    const Node: z.ZodType<Node> = z.object({ name: z.string(), get children() { return z.array(Node) } })
    const tree = z.toJSONSchema(Node)
    for (const validator of bothWays(tree)) {
      expect(validator.validate({ name: "a", children: [{ name: "b", children: [] }] })).toBeUndefined()
      expect(validator.validate({ name: "a", children: [{ name: "b", children: [{ name: 1, children: [] }] }] })).toHaveLength(1)
    }

    // a schema reused under an id lands in $defs, with zod's `id` beside it (draft-04's $id: no keyword here)
    const Point = z.object({ x: z.number(), y: z.number() }).meta({ id: "Point" })
    const segment = z.toJSONSchema(z.object({ from: Point, to: Point }))
    expect(segment).toMatchObject({ $defs: { Point: { id: "Point" } }, properties: { from: { $ref: "#/$defs/Point" } } })
    for (const validator of bothWays(segment)) {
      expect(validator.validate({ from: { x: 0, y: 0 }, to: { x: 1, y: 2 } })).toBeUndefined()
      expect(validator.validate({ from: { x: 0, y: 0 }, to: { x: 1 } })).toHaveLength(1)
    }

    // unions, records, literals and defaults
    const event = z.toJSONSchema(z.object({
      kind: z.discriminatedUnion("type", [
        z.object({ type: z.literal("click"), x: z.number() }),
        z.object({ type: z.literal("key"), key: z.string().regex(/^[a-z]$/) })
      ]),
      flags: z.record(z.string(), z.boolean()),
      retries: z.number().default(3)
    }))
    for (const validator of bothWays(event)) {
      expect(validator.validate({ kind: { type: "key", key: "a" }, flags: { on: true }, retries: 1 })).toBeUndefined()
      expect(validator.validate({ kind: { type: "key", key: "AB" }, flags: { on: "yes" }, retries: 1 })).toBeDefined()
    }
  })

  it("takes schemas exactly as Pydantic 2 writes them (no $schema: draft-07, with $defs, titles and anyOf null)", () => {
    const person = {
      $defs: {
        Address: {
          additionalProperties: false,
          properties: { street: { title: "Street", type: "string" }, city: { title: "City", type: "string" } },
          required: ["street", "city"],
          title: "Address",
          type: "object"
        },
        Unit: { enum: ["celsius", "fahrenheit"], title: "Unit", type: "string" },
        Cat: {
          properties: { pet_type: { const: "cat", title: "Pet Type", type: "string" }, meows: { title: "Meows", type: "integer" } },
          required: ["pet_type", "meows"],
          title: "Cat",
          type: "object"
        },
        Dog: {
          properties: { pet_type: { const: "dog", title: "Pet Type", type: "string" }, barks: { title: "Barks", type: "number" } },
          required: ["pet_type", "barks"],
          title: "Dog",
          type: "object"
        }
      },
      additionalProperties: false,
      properties: {
        name: { description: "Full name", title: "Name", type: "string", minLength: 1 },
        age: { anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }], default: null, title: "Age" },
        address: { $ref: "#/$defs/Address" },
        unit: { $ref: "#/$defs/Unit", default: "celsius" },
        tags: { items: { type: "string" }, title: "Tags", type: "array" },
        scores: { additionalProperties: { type: "number" }, title: "Scores", type: "object" },
        code: { pattern: "^[A-Z]{3}$", title: "Code", type: "string" },
        pet: {
          discriminator: { mapping: { cat: "#/$defs/Cat", dog: "#/$defs/Dog" }, propertyName: "pet_type" },
          oneOf: [{ $ref: "#/$defs/Cat" }, { $ref: "#/$defs/Dog" }],
          title: "Pet"
        }
      },
      required: ["name", "address", "pet"],
      title: "Person",
      type: "object"
    }
    const good = {
      name: "Ada",
      age: null,
      address: { street: "1 Main St", city: "Paris" },
      unit: "celsius",
      tags: ["x"],
      scores: { math: 1.5 },
      code: "ABC",
      pet: { pet_type: "dog", barks: 3 }
    }
    for (const validator of bothWays(person)) {
      expect(validator.validate(good)).toBeUndefined()
      expect(validator.validate({ ...good, age: -1 })).toBeDefined()
      expect(validator.validate({ ...good, address: { street: "1 Main St" } })).toBeDefined()
      expect(validator.validate({ ...good, unit: "kelvin" })).toBeDefined()
      expect(validator.validate({ ...good, code: "abc" })).toBeDefined()
      expect(validator.validate({ ...good, pet: { pet_type: "cat", barks: 3 } })).toBeDefined()
      expect(validator.validate({ ...good, nickname: "A" })).toBeDefined()
    }

    // a self-referencing model: the root refers into $defs
    const node = {
      $defs: {
        Node: {
          properties: {
            value: { title: "Value", type: "integer" },
            next: { anyOf: [{ $ref: "#/$defs/Node" }, { type: "null" }], default: null }
          },
          required: ["value"],
          title: "Node",
          type: "object"
        }
      },
      $ref: "#/$defs/Node"
    }
    for (const validator of bothWays(node)) {
      expect(validator.validate({ value: 1, next: { value: 2, next: null } })).toBeUndefined()
      expect(validator.validate({ value: 1, next: { value: "2" } })?.[0]).toBe("/next/value must be integer")
    }
  })

  it("takes draft-07 with definitions, however the $schema URI is written", () => {
    for (const $schema of ["http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema", "https://json-schema.org/draft-07/schema#"]) {
      const schema = {
        $schema,
        definitions: { positive: { type: "integer", exclusiveMinimum: 0 } },
        type: "array",
        items: [{ type: "string" }, { $ref: "#/definitions/positive" }],
        additionalItems: false
      }
      for (const validator of bothWays(schema)) {
        expect(validator.validate(["a", 1])).toBeUndefined()
        expect(validator.validate(["a", 0])).toHaveLength(1)
        expect(validator.validate(["a", 1, 2])).toHaveLength(1)
      }
    }
  })

  it("takes 2019-09: dependentRequired, unevaluatedProperties", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2019-09/schema",
      type: "object",
      allOf: [{ properties: { card: { type: "string" } } }, { properties: { billing: { type: "string" } } }],
      dependentRequired: { card: ["billing"] },
      unevaluatedProperties: false
    }
    for (const validator of bothWays(schema)) {
      expect(validator.validate({ card: "4242", billing: "Paris" })).toBeUndefined()
      expect(validator.validate({ card: "4242" })).toHaveLength(1)
      expect(validator.validate({ billing: "Paris", other: 1 })).toHaveLength(1)
    }
    // dependentRequired holds property names, not a subschema a $ref may point to
    expect(requestError({ ...schema, $ref: "#/dependentRequired/card" })).toBe('$ref "#/dependentRequired/card": does not point to a subschema')
  })

  it("takes 2020-12 with unevaluatedProperties and $defs", () => {
    const schema = {
      $schema: draft2020,
      $defs: { named: { properties: { name: { type: "string" } } } },
      type: "object",
      $ref: "#/$defs/named",
      properties: { age: { type: "integer" } },
      unevaluatedProperties: false
    }
    for (const validator of bothWays(schema)) {
      expect(validator.validate({ name: "Ada", age: 3 })).toBeUndefined()
      expect(validator.validate({ name: "Ada", other: 3 })).toEqual(["(root) must NOT have unevaluated properties"])
    }
  })

  it("takes draft-06", () => {
    const schema = { $schema: "http://json-schema.org/draft-06/schema#", type: "number", exclusiveMinimum: 0 }
    for (const validator of bothWays(schema)) {
      expect(validator.validate(1)).toBeUndefined()
      expect(validator.validate(0)).toHaveLength(1)
    }
  })

  it("checks a schema against its own dialect's meta-schema", () => {
    // draft-07's tuple form is no longer valid in 2020-12
    const tuple = { $schema: draft2020, type: "array", items: [{ type: "string" }] }
    expect(requestError(tuple)).toMatch(/^invalid JSON Schema: schema is invalid: data\/items must be/)
    expect(compileJsonSchema(tuple)).toEqual({ error: expect.stringMatching(/^schema is invalid: data\/items must be/) })
    expect(requestError({ $schema: draft2020, prefixItems: {} })).toMatch(/^invalid JSON Schema: schema is invalid: data\/prefixItems/)
  })

  it("refuses a dialect it does not validate, listing the ones it does", () => {
    const accepted = "https://json-schema.org/draft/2020-12/schema, https://json-schema.org/draft/2019-09/schema, " +
      "http://json-schema.org/draft-07/schema#, http://json-schema.org/draft-06/schema# (none means draft-07)"
    for (const $schema of ["http://json-schema.org/draft-04/schema#", "https://example.com/my-dialect", "https://json-schema.org/schema"]) {
      const message = `$schema ${JSON.stringify($schema)} is not a JSON Schema dialect the gateway validates; declare one of ${accepted}`
      expect(requestError({ $schema, type: "object" })).toBe(`invalid JSON Schema: ${message}`)
      expect(compileJsonSchema({ $schema, type: "object" })).toEqual({ error: message })
    }
    expect(requestError({ $schema: 7, type: "object" })).toMatch(/^invalid JSON Schema: \$schema: expected the URI of a JSON Schema dialect/)
  })

  it("refuses dynamic references in request schemas (they would escape the bound on $ref targets)", () => {
    expect(requestError({ $schema: draft2020, $dynamicAnchor: "node", items: { $dynamicRef: "#node" } })).toBe(
      "$dynamicAnchor: dynamic references are not supported in request schemas"
    )
    expect(requestError({ $schema: "https://json-schema.org/draft/2019-09/schema", items: { $recursiveRef: "#" } })).toBe(
      "$recursiveRef: dynamic references are not supported in request schemas"
    )
  })

  it("meters a validation in 2020-12 as in draft-07", () => {
    const validator = requestValidator({
      $schema: draft2020,
      type: "array",
      items: { type: "object", unevaluatedProperties: { anyOf: Array.from({ length: 100 }, (_, i) => ({ type: "string", minLength: i })) } }
    })
    const wide = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, "x"]))
    expect(validator.validate(Array.from({ length: 200 }, () => wide))?.[0]).toMatch(/too costly/)
    expect(validator.validate([{ a: "x" }])).toBeUndefined()
  })
})
