/**
 * JSON Schemas that come with a request (output_schema, additional_tools parameters, the
 * OpenAI route's response_format and tools) cannot stall the gateway: patterns run on a
 * linear-time engine, schemas past the limits are a 400 naming the field, and a schema that
 * multiplies the work of validation is stopped by a budget. No test asserts a duration: an
 * attack that stalled the event loop would time the test out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maxRequestSubschemas } from "../../src/jsonSchema.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const config = `
[functions.extract]
type = "json"
[functions.extract.variants.only]
type = "chat_completion"
model = "dummy::json"

[functions.echo_json]
type = "json"
[functions.echo_json.variants.only]
type = "chat_completion"
model = "dummy::echo_request_messages"

[functions.assistant]
type = "chat"
[functions.assistant.variants.only]
type = "chat_completion"
model = "dummy::offered_tool"
`

const hello = { type: "object", properties: { answer: { type: "string", pattern: "^H[a-z]+$" } }, required: ["answer"] }
const lookahead = { type: "object", properties: { answer: { type: "string", pattern: "^(?=H)\\w+$" } } }
const backreference = { type: "object", properties: { answer: { type: "string", pattern: "^(l)\\1$" } } }
const huge = { type: "object", properties: Object.fromEntries(Array.from({ length: 15_000 }, (_, i) => [`p${i}`, { type: "string" }])) }
const tooManySubschemas = `the schema has more than ${maxRequestSubschemas} subschemas`
const notSupported = "not supported (patterns in request schemas run on a linear-time engine: no backreferences or lookaround)"

/** dummy::echo_request_messages answers the messages it got as JSON: this schema puts `pattern` on the user's text */
const echoedTextSchema = (pattern: string) => ({
  type: "object",
  properties: {
    messages: {
      type: "array",
      items: { type: "object", properties: { content: { type: "array", items: { type: "object", properties: { text: { type: "string", pattern } } } } } }
    }
  },
  required: ["messages"]
})

const userSays = (text: string) => ({ messages: [{ role: "user", content: text }] })

describe("request JSON Schemas run bounded", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  const extract = (outputSchema: unknown) =>
    gateway.post("/inference", { function_name: "extract", input: userSays("Hi"), output_schema: outputSchema })
  const expectNormalAnswer = async () => {
    const answer = await extract(hello)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.output.parsed).toEqual({ answer: "Hello" })
  }

  describe("output_schema", () => {
    it("checks ^(a|a)+$ against a long value at once (a backtracking engine would take 2^60 steps)", async () => {
      const schema = echoedTextSchema("^(a|a)+$")
      const misfit = await gateway.post("/inference", { function_name: "echo_json", input: userSays("a".repeat(60) + "!"), output_schema: schema })
      expect(misfit.status, JSON.stringify(misfit.body)).toBe(200)
      expect(misfit.body.output.parsed).toBeNull()
      const fit = await gateway.post("/inference", { function_name: "echo_json", input: userSays("a".repeat(60)), output_schema: schema })
      expect(fit.status).toBe(200)
      expect(fit.body.output.parsed.messages[0].content[0].text).toBe("a".repeat(60))
      await expectNormalAnswer()
    })

    it("validates a normal schema with a pattern as before", async () => {
      await expectNormalAnswer()
      const misfit = await extract({ ...hello, properties: { answer: { type: "string", pattern: "^h" } } })
      expect(misfit.status).toBe(200)
      expect(misfit.body.output.raw).toBe('{"answer":"Hello"}')
      expect(misfit.body.output.parsed).toBeNull()
    })

    it("refuses a 15 000-property schema with a 400 naming the limit", async () => {
      const answer = await extract(huge)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toBe(`output_schema: ${tooManySubschemas}`)
      await expectNormalAnswer()
    })

    it("refuses lookahead and backreferences with a 400 naming the pattern", async () => {
      const withLookahead = await extract(lookahead)
      expect(withLookahead.status).toBe(400)
      expect(withLookahead.body.error).toContain(`output_schema: pattern "^(?=H)\\\\w+$": ${notSupported}`)
      const withBackreference = await extract(backreference)
      expect(withBackreference.status).toBe(400)
      expect(withBackreference.body.error).toContain(`output_schema: pattern "^(l)\\\\1$": ${notSupported}`)
    })

    it("stops a small schema whose references multiply the work of validation", async () => {
      const definitions: Record<string, unknown> = { d40: { type: "string" } }
      for (let i = 0; i < 40; i++) definitions[`d${i}`] = { allOf: [{ $ref: `#/definitions/d${i + 1}` }, { $ref: `#/definitions/d${i + 1}` }] }
      const answer = await extract({ definitions, $ref: "#/definitions/d0" })
      // 2^40 applications of d40 to the output: stopped by the budget, the output does not fit
      expect(answer.status).toBe(200)
      expect(answer.body.output.parsed).toBeNull()
      await expectNormalAnswer()
    })
  })

  describe("additional_tools parameters", () => {
    const callTool = (parameters: unknown) =>
      gateway.post("/inference", {
        function_name: "assistant",
        input: userSays("Weather?"),
        additional_tools: [{ name: "lookup", description: "Looks up the weather", parameters }]
      })
    const location = (pattern: string) => ({
      type: "object",
      properties: { location: { type: "string", pattern }, units: { type: "string" } },
      required: ["location"]
    })

    it("validates arguments against a pattern as before", async () => {
      const fit = await callTool(location("^B[a-z]+$"))
      expect(fit.status, JSON.stringify(fit.body)).toBe(200)
      expect(fit.body.content[0]).toMatchObject({ type: "tool_call", name: "lookup", arguments: { location: "Brooklyn", units: "celsius" } })
      const misfit = await callTool(location("^(x|x)+$"))
      expect(misfit.status).toBe(200)
      expect(misfit.body.content[0]).toMatchObject({ type: "tool_call", raw_name: "lookup", arguments: null })
    })

    it("refuses lookahead and huge parameters with a 400 naming the tool's field", async () => {
      const withLookahead = await callTool(location("^(?!x)B"))
      expect(withLookahead.status).toBe(400)
      expect(withLookahead.body.error).toContain(`additional_tools[0].parameters: pattern "^(?!x)B": ${notSupported}`)
      const tooLarge = await callTool(huge)
      expect(tooLarge.status).toBe(400)
      expect(tooLarge.body.error).toBe(`additional_tools[0].parameters: ${tooManySubschemas}`)
    })
  })

  describe("the OpenAI-compatible route", () => {
    const complete = (body: Record<string, unknown>) =>
      gateway.post("/openai/v1/chat/completions", { messages: [{ role: "user", content: "Hi" }], ...body })
    const withFormat = (schema: unknown) =>
      complete({
        model: "gateway::function_name::extract",
        response_format: { type: "json_schema", json_schema: { name: "answer", schema } }
      })

    it("validates response_format.json_schema as before", async () => {
      const answer = await withFormat(hello)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(JSON.parse(answer.body.choices[0].message.content)).toEqual({ answer: "Hello" })
    })

    it("refuses lookahead and huge schemas with a 400 naming the OpenAI field", async () => {
      const withLookahead = await withFormat(lookahead)
      expect(withLookahead.status).toBe(400)
      expect(withLookahead.body.error.message).toContain(`response_format.json_schema.schema: pattern "^(?=H)\\\\w+$": ${notSupported}`)
      const tooLarge = await withFormat(huge)
      expect(tooLarge.status).toBe(400)
      expect(tooLarge.body.error.message).toBe(`response_format.json_schema.schema: ${tooManySubschemas}`)
      const badTool = await complete({
        model: "gateway::function_name::assistant",
        tools: [{ type: "function", function: { name: "lookup", parameters: backreference } }]
      })
      expect(badTool.status).toBe(400)
      expect(badTool.body.error.message).toContain(`tools[0].function.parameters: pattern "^(l)\\\\1$": ${notSupported}`)
      const answer = await withFormat(hello)
      expect(answer.status).toBe(200)
    })
  })
})
