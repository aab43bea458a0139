import { describe, expect, it } from "vitest"
import { acceptAnything, compileJsonSchema, compileRequestJsonSchema } from "../../src/jsonSchema.ts"

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

describe("acceptAnything", () => {
  it("accepts every value", () => {
    for (const value of [null, 1, "x", [], {}]) expect(acceptAnything.validate(value)).toBeUndefined()
  })
})
