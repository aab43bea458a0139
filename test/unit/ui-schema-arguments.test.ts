/** The Playground's form generated from a user schema: the kind of field per property, and the arguments the typed values stand for. */
import { describe, expect, it } from "vitest"
import { initialValues, schemaArguments, schemaProperties } from "../../ui/src/components/playground/schemaArguments.ts"

const schema = {
  type: "object",
  properties: {
    topic: { type: "string", description: "what the haiku is about" },
    lines: { type: "integer" },
    temperature: { type: "number" },
    rhyme: { type: "boolean" },
    mood: { enum: ["calm", 3, null] },
    note: { type: ["string", "null"] },
    extra: { type: "object" },
    anything: {}
  },
  required: ["topic", "mood"]
}

describe("the playground's schema form", () => {
  it("gives each property the field of its type, enums as a choice and the rest as JSON", () => {
    expect(schemaProperties(schema).map(({ name, kind, required }) => [name, kind, required])).toEqual([
      ["topic", "string", true],
      ["lines", "integer", false],
      ["temperature", "number", false],
      ["rhyme", "boolean", false],
      ["mood", "enum", true],
      ["note", "string", false],
      ["extra", "json", false],
      ["anything", "json", false]
    ])
    expect(schemaProperties(schema)[0].description).toBe("what the haiku is about")
    expect(initialValues(schema)).toEqual({ topic: "", lines: "", temperature: "", rhyme: false, mood: "0", note: "", extra: "", anything: "" })
  })

  it("turns the typed values into arguments, leaving out empty optional fields", () => {
    const values = { ...initialValues(schema), topic: "snow", lines: "3", temperature: "0.5", rhyme: true, mood: "1", extra: "{\"a\": [1]}" }
    expect(schemaArguments(schema, values)).toEqual({ arguments: { topic: "snow", lines: 3, temperature: 0.5, rhyme: true, mood: 3, extra: { a: [1] } } })
    expect(schemaArguments(schema, { ...values, mood: "2" })).toEqual({ arguments: expect.objectContaining({ mood: null }) })
  })

  it("names the field at fault", () => {
    const values = { ...initialValues(schema), topic: "snow" }
    expect(schemaArguments(schema, { ...values, topic: "" })).toEqual({ problem: "topic is required" })
    expect(schemaArguments(schema, { ...values, lines: "2.5" })).toEqual({ problem: "lines must be an integer" })
    expect(schemaArguments(schema, { ...values, temperature: "warm" })).toEqual({ problem: "temperature must be a number" })
    expect(schemaArguments(schema, { ...values, extra: "{" })).toEqual({ problem: "extra must be JSON" })
  })
})
