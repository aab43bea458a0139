/**
 * The `dummy` provider, non-streamed, over real HTTP through configured functions and called
 * directly with `model_name: "dummy::<name>"`: TensorZero's models in functions (each of its
 * names is in dummy-tensorzero.test.ts) and the gateway's own models.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  dummyBadToolArguments,
  dummyDelayMs,
  dummyGoodKey,
  dummyHelloText,
  dummyHelloUsage,
  dummyInvalidToolArguments,
  dummyJson,
  dummyText,
  dummyThought,
  dummyToolArguments
} from "../../src/providers/dummy/index.ts"
import { dummyConfig, dummyConfigFiles } from "../support/dummyConfig.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const hello = { messages: [{ role: "user", content: "Hello" }] }
/** TensorZero's usage of a whole answer of one block */
const oneBlockUsage = { input_tokens: 10, output_tokens: 1 }

/** an error answer: JSON `{"error": "..."}` and nothing else */
const expectError = (response: { status: number; body: any }, status: number, pattern: RegExp) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status)
  expect(Object.keys(response.body)).toEqual(["error"])
  expect(response.body.error).toMatch(pattern)
}

describe("the dummy provider, non-streamed", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config: dummyConfig, files: dummyConfigFiles })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  const infer = (body: Record<string, unknown>) => gateway.post("/inference", { input: hello, ...body })

  describe("default text", () => {
    it("answers any unknown model name with TensorZero's fixed text, usage and ids", async () => {
      const response = await infer({ model_name: "dummy::test" })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/^application\/json/)
      expect(response.body).toEqual({
        inference_id: expect.stringMatching(uuidV7),
        episode_id: expect.stringMatching(uuidV7),
        variant_name: "dummy::test",
        content: [{ type: "text", text: dummyText }],
        usage: oneBlockUsage,
        finish_reason: "stop"
      })
      expect(response.body.inference_id).not.toBe(response.body.episode_id)
    })

    it("answers through a configured chat function", async () => {
      const response = await infer({ function_name: "good" })
      expect(response.status).toBe(200)
      expect(response.body.variant_name).toBe("good")
      expect(response.body.content).toEqual([{ type: "text", text: dummyText }])
      expect(response.body.usage).toEqual(oneBlockUsage)
    })

    it("hello, the gateway's former default, keeps its text and usage 10 + 10", async () => {
      const response = await infer({ function_name: "chat" })
      expect(response.status).toBe(200)
      expect(response.body.variant_name).toBe("text")
      expect(response.body.content).toEqual([{ type: "text", text: dummyHelloText }])
      expect(response.body.usage).toEqual(dummyHelloUsage)
      expect(dummyHelloText).toBe("Hello from the dummy provider. This answer is always the same.")
    })

    it("gives every inference its own id", async () => {
      const [a, b] = await Promise.all([infer({ model_name: "dummy::test" }), infer({ model_name: "dummy::test" })])
      expect(a.body.inference_id).not.toBe(b.body.inference_id)
      expect(a.body.episode_id).not.toBe(b.body.episode_id)
    })

    it("adds original_response only when asked", async () => {
      const plain = await infer({ model_name: "dummy::test" })
      expect(plain.body).not.toHaveProperty("original_response")
      const withOriginal = await infer({ model_name: "dummy::test", include_original_response: true })
      expect(typeof withOriginal.body.original_response).toBe("string")
      expect(JSON.parse(withOriginal.body.original_response).output).toEqual([{ type: "text", text: dummyText }])
    })
  })

  describe("json", () => {
    it("in a json function: output.parsed is the object and output.raw the text", async () => {
      const response = await infer({ function_name: "extract" })
      expect(response.status).toBe(200)
      expect(response.body.variant_name).toBe("json")
      expect(response.body.output).toEqual({ raw: dummyJson, parsed: JSON.parse(dummyJson) })
      expect(response.body).not.toHaveProperty("content")
      expect(response.body.usage).toEqual(oneBlockUsage)
    })

    it("with json_mode tool: the tool call's arguments become the output", async () => {
      const response = await infer({ function_name: "extract", variant_name: "as_tool" })
      expect(response.status).toBe(200)
      expect(response.body.output).toEqual({ raw: dummyJson, parsed: JSON.parse(dummyJson) })
    })

    it("parsed is null when the output does not fit the request's output_schema", async () => {
      const response = await infer({
        function_name: "extract",
        output_schema: { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] }
      })
      expect(response.status).toBe(200)
      expect(response.body.output).toEqual({ raw: dummyJson, parsed: null })
    })

    it("called as a model, it answers the JSON as text", async () => {
      const response = await infer({ model_name: "dummy::json" })
      expect(response.status).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: dummyJson }])
    })
  })

  describe("tool calls", () => {
    it("tool: a valid call of get_temperature, configured", async () => {
      const response = await infer({ function_name: "weather", variant_name: "tensorzero_tool" })
      expect(response.status).toBe(200)
      expect(response.body.usage).toEqual(oneBlockUsage)
      expect(response.body.content).toEqual([{
        type: "tool_call",
        id: expect.any(String),
        name: "get_temperature",
        arguments: JSON.parse(dummyToolArguments),
        raw_name: "get_temperature",
        raw_arguments: dummyToolArguments
      }])
      expect(response.body.finish_reason).toBe("tool_call")
    })

    it("offered_tool (the gateway's own): a call of the configured tool, or of one given in additional_tools", async () => {
      const configured = await infer({ function_name: "weather" })
      expect(configured.body.variant_name).toBe("tool")
      expect(configured.body.content[0]).toMatchObject({ name: "get_temperature", arguments: JSON.parse(dummyToolArguments) })
      expect(configured.body.usage).toEqual(dummyHelloUsage)
      const response = await infer({
        model_name: "dummy::offered_tool",
        additional_tools: [{
          name: "lookup",
          description: "look a place up",
          parameters: { type: "object", properties: { location: { type: "string" } } }
        }]
      })
      expect(response.status).toBe(200)
      expect(response.body.content[0]).toMatchObject({
        type: "tool_call",
        name: "lookup",
        arguments: JSON.parse(dummyToolArguments),
        raw_name: "lookup"
      })
    })

    it("tool: with no tool offered, the name is null and the raw values are kept", async () => {
      const response = await infer({ model_name: "dummy::tool" })
      expect(response.status).toBe(200)
      expect(response.body.content).toEqual([{
        type: "tool_call",
        id: expect.any(String),
        name: null,
        arguments: null,
        raw_name: "get_temperature",
        raw_arguments: dummyToolArguments
      }])
    })

    it("bad_tool: arguments that do not fit the schema (units Celsius, not in its enum) are null, raw_arguments kept", async () => {
      const response = await infer({ function_name: "weather", variant_name: "bad_tool" })
      expect(response.status).toBe(200)
      expect(response.body.variant_name).toBe("bad_tool")
      expect(response.body.content).toEqual([{
        type: "tool_call",
        id: expect.any(String),
        name: "get_temperature",
        arguments: null,
        raw_name: "get_temperature",
        raw_arguments: dummyBadToolArguments
      }])
    })

    it("invalid_tool_arguments: arguments that are not JSON are null, raw_arguments kept", async () => {
      const response = await infer({ function_name: "weather", variant_name: "invalid_tool_arguments" })
      expect(response.status).toBe(200)
      expect(response.body.content).toEqual([{
        type: "tool_call",
        id: expect.any(String),
        name: "get_temperature",
        arguments: null,
        raw_name: "get_temperature",
        raw_arguments: dummyInvalidToolArguments
      }])
    })
  })

  describe("reasoner", () => {
    it("answers a thought, then text", async () => {
      for (const body of [{ model_name: "dummy::reasoner" }, { function_name: "reasoning" }]) {
        const response = await infer(body)
        expect(response.status).toBe(200)
        // a thought says which type of provider made it (whose signature it would carry)
        expect(response.body.content).toEqual([{ type: "thought", text: dummyThought, provider_type: "dummy" }, { type: "text", text: dummyText }])
      }
    })
  })

  describe("error", () => {
    it("fails with a 502 whose message lists the provider's error", async () => {
      for (const body of [{ model_name: "dummy::error" }, { function_name: "failing" }]) {
        const response = await infer(body)
        expectError(response, 502, /dummy::error/)
        expect(response.body.error).toContain('provider "dummy"')
        expect(response.body.error).toContain("Error sending request to Dummy provider for model 'error'.")
      }
    })
  })

  describe("flaky", () => {
    it("called directly, fails every other call", async () => {
      const statuses: Array<number> = []
      for (let i = 0; i < 4; i++) {
        const response = await infer({ model_name: "dummy::flaky" })
        statuses.push(response.status)
        if (response.status !== 200) expectError(response, 502, /the dummy model `flaky` failed call \d+/)
      }
      expect([[502, 200, 502, 200], [200, 502, 200, 502]]).toContainEqual(statuses)
    })

    it("with a second provider in routing, every call succeeds, alternating providers", async () => {
      const answeredBy: Array<string> = []
      for (let i = 0; i < 4; i++) {
        const response = await infer({ function_name: "flaky_with_backup" })
        expect(response.status).toBe(200)
        // the backup is a reasoner: its answer starts with a thought
        answeredBy.push(response.body.content[0].type === "thought" ? "backup" : "flaky")
      }
      expect([["backup", "flaky", "backup", "flaky"], ["flaky", "backup", "flaky", "backup"]]).toContainEqual(answeredBy)
    })

    it("with one retry, every call succeeds", async () => {
      for (let i = 0; i < 4; i++) {
        const response = await infer({ function_name: "flaky_retried" })
        expect(response.status, JSON.stringify(response.body)).toBe(200)
        expect(response.body.content).toEqual([{ type: "text", text: dummyHelloText }])
      }
    })
  })

  describe("delay_500ms", () => {
    it("answers after its delay when nothing limits it", async () => {
      const started = Date.now()
      const response = await infer({ function_name: "slow_without_timeout" })
      expect(response.status).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: dummyHelloText }])
      expect(Date.now() - started).toBeGreaterThanOrEqual(dummyDelayMs - 20)
    })

    // the variant's own timeout is the inference's (408); a provider's or a model's is an upstream's (504)
    for (const [where, functionName, status] of [
      ["variant", "slow_variant_timeout", 408],
      ["provider", "slow_provider_timeout", 504],
      ["model", "slow_model_timeout", 504]
    ] as const) {
      it(`a ${where} timeout shorter than the delay answers ${status} without waiting for the model`, async () => {
        const started = Date.now()
        const response = await infer({ function_name: functionName })
        const elapsed = Date.now() - started
        expectError(response, status, /timed out after 100 ms/)
        expect(elapsed).toBeLessThan(dummyDelayMs)
      })
    }
  })

  describe("echo_request_messages and echo", () => {
    const templatedInput = {
      system: { assistant_name: "Skye" },
      messages: [
        { role: "user", content: [{ type: "text", arguments: { city: "Lisbon", days: 3 } }] },
        { role: "assistant", content: [{ type: "text", arguments: { note: "sunny" } }, { type: "text", text: "Anything else?" }] },
        {
          role: "user",
          content: [
            { type: "template", name: "greeting", arguments: { who: "Ada" } },
            { type: "raw_text", value: "{{ not a template }}" }
          ]
        }
      ]
    }

    it("echo: answers the first text of the last user message, after templates", async () => {
      const response = await infer({ function_name: "templated", variant_name: "echo", input: templatedInput })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: "Greetings, Ada!" }])
    })

    it("echo_request_messages: answers the rendered system prompt and messages, after templates", async () => {
      const response = await infer({
        function_name: "templated",
        variant_name: "echo_request_messages",
        input: templatedInput
      })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.variant_name).toBe("echo_request_messages")
      expect(JSON.parse(response.body.content[0].text)).toEqual({
        system: "You are Skye, a weather assistant.",
        messages: [
          { role: "user", content: [{ type: "text", text: "What is the weather in Lisbon for the next 3 days?" }] },
          { role: "assistant", content: [{ type: "text", text: "Noted: sunny" }, { type: "text", text: "Anything else?" }] },
          {
            role: "user",
            content: [{ type: "text", text: "Greetings, Ada!" }, { type: "text", text: "{{ not a template }}" }]
          }
        ]
      })
    })

    it("passes a plain system string and string content through untouched", async () => {
      const response = await infer({
        model_name: "dummy::echo_request_messages",
        input: { system: "Plain {{ system }}", messages: [{ role: "user", content: "Hi {{ there }}" }] }
      })
      expect(response.status).toBe(200)
      expect(JSON.parse(response.body.content[0].text)).toEqual({
        system: "Plain {{ system }}",
        messages: [{ role: "user", content: [{ type: "text", text: "Hi {{ there }}" }] }]
      })
    })
  })

  describe("test_key with api_key_location = dynamic::key", () => {
    it("succeeds with credentials {key: good_key}", async () => {
      const response = await infer({ function_name: "keyed", credentials: { key: dummyGoodKey } })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: dummyText }])
    })

    it("fails with another key", async () => {
      const response = await infer({ function_name: "keyed", credentials: { key: "bad_key" } })
      expectError(response, 502, /Invalid API key for Dummy provider/)
    })

    it("answers 400 naming the credential when it is missing", async () => {
      for (const credentials of [undefined, { other: dummyGoodKey }]) {
        const response = await infer({ function_name: "keyed", ...(credentials === undefined ? {} : { credentials }) })
        expectError(response, 400, /credentials\.key/)
      }
    })
  })

  describe("stream_error", () => {
    it("answers normally when not streamed", async () => {
      const response = await infer({ function_name: "stream_error" })
      expect(response.status).toBe(200)
      expect(response.body.content).toEqual([{ type: "text", text: dummyHelloText }])
    })
  })
})
