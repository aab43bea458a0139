/**
 * JSON Schemas in the dialect their client declares, over HTTP on both inference routes and in
 * configuration files: zod 4 (LangChain JS, the Vercel AI SDK with zod 4 tools) and Pydantic 2
 * write 2020-12. The schemas here are generated with zod's `z.toJSONSchema`, as clients do; an
 * undeclared or unknown `$schema` is covered by the unit tests, except for the 400 each route
 * answers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { z } from "zod"
import { type FakeOpenAi, startFakeOpenAi, textCompletion } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const draft2020 = "https://json-schema.org/draft/2020-12/schema"
const weatherParameters = z.toJSONSchema(z.object({
  location: z.string().describe("a city"),
  units: z.enum(["celsius", "fahrenheit"]).optional()
}))
const kelvinParameters = z.toJSONSchema(z.object({ location: z.string(), units: z.literal("kelvin") }))
const answerSchema = z.toJSONSchema(z.object({ answer: z.string().regex(/^H[a-z]+$/) }))
const byeSchema = z.toJSONSchema(z.object({ answer: z.literal("Bye") }))

const config = (apiBase: string) => `
[models.up]
routing = ["a"]
[models.up.providers.a]
type = "openai"
model_name = "gpt-up"
api_base = "${apiBase}"
api_key_location = "none"

[tools.weather]
description = "The weather of a city"
parameters = "tools/weather.json"

[functions.extract]
type = "json"
[functions.extract.variants.only]
type = "chat_completion"
model = "dummy::json"

[functions.extract_configured]
type = "json"
output_schema = "schemas/answer.json"
[functions.extract_configured.variants.only]
type = "chat_completion"
model = "dummy::json"

[functions.assistant]
type = "chat"
[functions.assistant.variants.only]
type = "chat_completion"
model = "dummy::offered_tool"

[functions.weather_assistant]
type = "chat"
tools = ["weather"]
[functions.weather_assistant.variants.only]
type = "chat_completion"
model = "dummy::offered_tool"

[functions.up_chat]
type = "chat"
[functions.up_chat.variants.only]
type = "chat_completion"
model = "up"

[functions.up_json]
type = "json"
[functions.up_json.variants.only]
type = "chat_completion"
model = "up"
`

const files = {
  "tools/weather.json": JSON.stringify(weatherParameters),
  "schemas/answer.json": JSON.stringify(answerSchema)
}

const userSays = (text: string) => ({ messages: [{ role: "user", content: text }] })
const dummyToolArguments = { location: "Brooklyn", units: "celsius" }

describe("JSON Schema 2020-12, as zod 4 writes it", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway
  beforeAll(async () => {
    fake = await startFakeOpenAi()
    gateway = await startGateway({ config: config(fake.apiBase), files })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  it("the generated schemas declare 2020-12", () => {
    for (const schema of [weatherParameters, kelvinParameters, answerSchema, byeSchema]) expect(schema.$schema).toBe(draft2020)
  })

  describe("POST /inference", () => {
    it("checks the output against an output_schema", async () => {
      const fit = await gateway.post("/inference", { function_name: "extract", input: userSays("Hi"), output_schema: answerSchema })
      expect(fit.status, JSON.stringify(fit.body)).toBe(200)
      expect(fit.body.output).toEqual({ raw: "{\"answer\":\"Hello\"}", parsed: { answer: "Hello" } })
      const misfit = await gateway.post("/inference", { function_name: "extract", input: userSays("Hi"), output_schema: byeSchema })
      expect(misfit.status).toBe(200)
      expect(misfit.body.output.parsed).toBeNull()
    })

    it("applies 2020-12's own keywords: $defs referenced with unevaluatedProperties", async () => {
      const schema = (property: string) => ({
        $schema: draft2020,
        $defs: { named: { properties: { [property]: { type: "string" } } } },
        $ref: "#/$defs/named",
        unevaluatedProperties: false
      })
      const fit = await gateway.post("/inference", { function_name: "extract", input: userSays("Hi"), output_schema: schema("answer") })
      expect(fit.status, JSON.stringify(fit.body)).toBe(200)
      expect(fit.body.output.parsed).toEqual({ answer: "Hello" })
      const misfit = await gateway.post("/inference", { function_name: "extract", input: userSays("Hi"), output_schema: schema("other") })
      expect(misfit.body.output.parsed).toBeNull()
    })

    it("checks tool call arguments against additional_tools parameters", async () => {
      const call = (parameters: unknown) =>
        gateway.post("/inference", {
          function_name: "assistant",
          input: userSays("Weather?"),
          additional_tools: [{ name: "lookup", description: "Looks up the weather", parameters }]
        })
      const fit = await call(weatherParameters)
      expect(fit.status, JSON.stringify(fit.body)).toBe(200)
      expect(fit.body.content[0]).toMatchObject({ type: "tool_call", name: "lookup", arguments: dummyToolArguments })
      const misfit = await call(kelvinParameters)
      expect(misfit.status).toBe(200)
      expect(misfit.body.content[0]).toMatchObject({ type: "tool_call", raw_name: "lookup", arguments: null })
    })

    it("refuses a $schema it does not validate with a 400 naming the field", async () => {
      const draft04 = { ...answerSchema, $schema: "http://json-schema.org/draft-04/schema#" }
      const output = await gateway.post("/inference", { function_name: "extract", input: userSays("Hi"), output_schema: draft04 })
      expect(output.status).toBe(400)
      expect(output.body.error).toMatch(
        /^output_schema: invalid JSON Schema: \$schema "http:\/\/json-schema.org\/draft-04\/schema#" is not a JSON Schema dialect the gateway validates; declare one of https:\/\/json-schema.org\/draft\/2020-12\/schema, /
      )
      const tool = await gateway.post("/inference", {
        function_name: "assistant",
        input: userSays("Weather?"),
        additional_tools: [{ name: "lookup", description: "", parameters: { ...weatherParameters, $schema: "https://example.com/dialect" } }]
      })
      expect(tool.status).toBe(400)
      expect(tool.body.error).toMatch(/^additional_tools\[0\]\.parameters: invalid JSON Schema: \$schema "https:\/\/example.com\/dialect" is not/)
    })
  })

  describe("configuration files", () => {
    it("a function's output_schema in 2020-12 checks the output", async () => {
      const answer = await gateway.post("/inference", { function_name: "extract_configured", input: userSays("Hi") })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(answer.body.output.parsed).toEqual({ answer: "Hello" })
    })

    it("a tool's parameters in 2020-12 check its arguments", async () => {
      const answer = await gateway.post("/inference", { function_name: "weather_assistant", input: userSays("Weather?") })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(answer.body.content[0]).toMatchObject({ type: "tool_call", name: "weather", arguments: dummyToolArguments })
    })
  })

  describe("POST /openai/v1/chat/completions", () => {
    const complete = (body: Record<string, unknown>) =>
      gateway.post("/openai/v1/chat/completions", { messages: [{ role: "user", content: "Weather in Brooklyn?" }], ...body })
    const tool = (parameters: unknown) => ({ type: "function", function: { name: "get_weather", description: "The weather", parameters } })

    it("takes tools as LangChain JS sends zod 4 tools, and passes them on as sent", async () => {
      const answer = await complete({ model: "gateway::model_name::dummy::offered_tool", tools: [tool(weatherParameters)] })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(answer.body.choices[0].message.tool_calls).toEqual([
        { id: expect.any(String), type: "function", function: { name: "get_weather", arguments: JSON.stringify(dummyToolArguments) } }
      ])
      fake.script.push({ kind: "json", body: textCompletion("Sunny") })
      const upstream = await complete({ model: "gateway::function_name::up_chat", tools: [tool(weatherParameters)] })
      expect(upstream.status, JSON.stringify(upstream.body)).toBe(200)
      expect(fake.requests[0].body.tools[0].function.parameters).toEqual(weatherParameters)
    })

    it("takes response_format json_schema in 2020-12 as a json function's output schema", async () => {
      const format = { type: "json_schema", json_schema: { name: "answer", schema: answerSchema } }
      const answer = await complete({ model: "gateway::function_name::extract", response_format: format })
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      expect(JSON.parse(answer.body.choices[0].message.content)).toEqual({ answer: "Hello" })
      fake.script.push({ kind: "json", body: textCompletion("{\"answer\":\"Hi\"}") })
      const upstream = await complete({ model: "gateway::function_name::up_json", response_format: format })
      expect(upstream.status, JSON.stringify(upstream.body)).toBe(200)
      expect(fake.requests[0].body.response_format.json_schema.schema).toEqual(answerSchema)
    })

    it("refuses a $schema it does not validate with a 400 naming the OpenAI field", async () => {
      const draft04 = "http://json-schema.org/draft-04/schema#"
      const badTool = await complete({ model: "gateway::function_name::assistant", tools: [tool({ ...weatherParameters, $schema: draft04 })] })
      expect(badTool.status).toBe(400)
      expect(badTool.body.error.message).toMatch(/^tools\[0\]\.function\.parameters: invalid JSON Schema: \$schema "http:\/\/json-schema.org\/draft-04\/schema#" is not/)
      const badFormat = await complete({
        model: "gateway::function_name::extract",
        response_format: { type: "json_schema", json_schema: { name: "answer", schema: { ...answerSchema, $schema: draft04 } } }
      })
      expect(badFormat.status).toBe(400)
      expect(badFormat.body.error.message).toMatch(/^response_format\.json_schema\.schema: invalid JSON Schema: \$schema "http:\/\/json-schema.org\/draft-04\/schema#" is not/)
      expect(fake.requests).toHaveLength(0)
    })
  })
})
