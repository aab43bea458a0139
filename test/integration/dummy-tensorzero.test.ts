/**
 * TensorZero's dummy models over real HTTP, answering what TensorZero's `providers/dummy.rs`
 * answers (its users' test suites assert these): `/inference` whole and streamed, called as
 * `dummy::<name>` and through configured models, and the dummy's embeddings.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const megumin = "Megumin gleefully chanted her spell, unleashing a thunderous explosion that lit up the sky and left a massive crater in its wake."
const wally = [
  "Wally,", " the", " golden", " retriever,", " wagged", " his", " tail", " excitedly", " as", " he", " devoured", " a", " slice", " of", " cheese", " pizza."
]
const hello = { messages: [{ role: "user", content: "Hello" }] }

const temperatureTool = {
  name: "get_temperature",
  description: "Get the current temperature in a given location",
  parameters: {
    type: "object",
    properties: { location: { type: "string" }, units: { type: "string", enum: ["fahrenheit", "celsius"] } },
    required: ["location"],
    additionalProperties: false
  }
}

const config = `
[models.keyed]
routing = ["dummy"]
[models.keyed.providers.dummy]
type = "dummy"
model_name = "test_key"
api_key_location = "dynamic::dummy_key"

[embedding_models.zeros]
routing = ["dummy"]
[embedding_models.zeros.providers.dummy]
type = "dummy"
model_name = "any"

[functions.extra_info]
type = "chat"
[functions.extra_info.variants.configured]
type = "chat_completion"
model = "dummy::echo_extra_info"
extra_body = [{ pointer = "/temperature", value = 0.5 }]
extra_headers = [{ name = "x-variant", value = "v" }]
`

describe("TensorZero's dummy models over HTTP", () => {
  let gateway: RunningGateway
  beforeAll(async () => {
    gateway = await startGateway({ config })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  const infer = (model: string, body: Record<string, unknown> = {}) => gateway.post("/inference", { model_name: `dummy::${model}`, input: hello, ...body })
  const stream = (model: string, body: Record<string, unknown> = {}) =>
    gateway.stream("/inference", { model_name: `dummy::${model}`, input: hello, stream: true, ...body })

  /** a streamed answer's content deltas (each event's, in order) and its last event */
  const streamed = async (model: string, body: Record<string, unknown> = {}) => {
    const answer = await stream(model, body)
    expect(answer.status, answer.raw).toBe(200)
    expect(answer.events.at(-1)).toBe("[DONE]")
    const events = answer.events.slice(0, -1)
    return { contents: events.slice(0, -1).map((event) => event.content), final: events.at(-1) }
  }

  describe("whole", () => {
    it("good and any unknown name: TensorZero's sentence, usage 10 + 1, finish_reason stop", async () => {
      for (const model of ["good", "some_model_it_does_not_know"]) {
        const answer = await infer(model)
        expect(answer.status).toBe(200)
        expect(answer.body).toMatchObject({
          variant_name: `dummy::${model}`,
          content: [{ type: "text", text: megumin }],
          usage: { input_tokens: 10, output_tokens: 1 },
          finish_reason: "stop"
        })
      }
    })

    it("each named model's fixed answer, with one output token per block", async () => {
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<unknown>, string]> = [
        ["null", [], "stop"],
        ["empty", [{ type: "text", text: "" }], "stop"],
        ["json", [{ type: "text", text: "{\"answer\":\"Hello\"}" }], "stop"],
        ["json_goodbye", [{ type: "text", text: "{\"answer\":\"Goodbye\"}" }], "stop"],
        ["alternate", [{ type: "text", text: "Megumin chanted her spell, but instead of an explosion, a gentle rain began to fall." }], "stop"],
        ["best_of_n_1", [{ type: "text", text: "{\"thinking\": \"hmmm\", \"answer_choice\": 1}" }], "stop"],
        ["llm_judge::true", [{ type: "text", text: "{\"score\": true}" }], "stop"],
        ["reasoner", [{ type: "thought", text: "hmmm", provider_type: "dummy" }, { type: "text", text: megumin }], "stop"],
        ["reasoner_with_signature", [{ type: "thought", text: "hmmm", signature: "my_signature", provider_type: "dummy" }, { type: "text", text: megumin }], "stop"],
        // a tool call no tool was offered for: name and arguments null, the raw values kept
        ["tool", [{ type: "tool_call", id: "0", name: null, arguments: null, raw_name: "get_temperature", raw_arguments: "{\"location\":\"Brooklyn\",\"units\":\"celsius\"}" }], "tool_call"],
        [
          "good_tool",
          [{ type: "tool_call", id: "0", name: null, arguments: null, raw_name: "output_schema_tool", raw_arguments: "{\"sentiment\":\"positive\",\"confidence\":0.95}" }],
          "tool_call"
        ]
      ]
      for (const [model, content, finishReason] of cases) {
        const answer = await infer(model)
        expect(answer.status, `${model}: ${JSON.stringify(answer.body)}`).toBe(200)
        expect(answer.body.content, model).toEqual(content)
        expect(answer.body.usage, model).toEqual({ input_tokens: 10, output_tokens: content.length })
        expect(answer.body.finish_reason, model).toBe(finishReason)
      }
    })

    it("tool, bad_tool, invalid_tool_arguments with get_temperature offered: valid, Celsius against the enum, not JSON", async () => {
      const withTool = { additional_tools: [temperatureTool] }
      expect((await infer("tool", withTool)).body.content).toEqual([{
        type: "tool_call",
        id: "0",
        name: "get_temperature",
        arguments: { location: "Brooklyn", units: "celsius" },
        raw_name: "get_temperature",
        raw_arguments: "{\"location\":\"Brooklyn\",\"units\":\"celsius\"}"
      }])
      expect((await infer("bad_tool", withTool)).body.content).toEqual([{
        type: "tool_call",
        id: "0",
        name: "get_temperature",
        arguments: null,
        raw_name: "get_temperature",
        raw_arguments: "{\"location\":\"Brooklyn\",\"units\":\"Celsius\"}"
      }])
      const invalid = await infer("invalid_tool_arguments", withTool)
      expect(invalid.body.content).toEqual([{
        type: "tool_call",
        id: "0",
        name: "get_temperature",
        arguments: null,
        raw_name: "get_temperature",
        raw_arguments: "Not valid 'JSON'"
      }])
      expect(invalid.body.finish_reason).toBe("tool_call")
    })

    it("usage as the names say", async () => {
      expect((await infer("input_tokens_zero")).body.usage).toEqual({ input_tokens: 0, output_tokens: 1 })
      expect((await infer("output_tokens_zero")).body.usage).toEqual({ input_tokens: 10, output_tokens: 0 })
      expect((await infer("input_tokens_output_tokens_zero")).body.usage).toEqual({ input_tokens: 0, output_tokens: 0 })
      expect((await infer("input_five_output_six")).body.usage).toEqual({ input_tokens: 5, output_tokens: 6 })
    })

    it("echo: the last user message's text; echo_request_messages: the system and messages as received", async () => {
      const input = {
        system: "My first system input.",
        messages: [
          { role: "user", content: "first" },
          { role: "assistant", content: "reply" },
          { role: "user", content: [{ type: "text", text: "My text input" }] }
        ]
      }
      expect((await infer("echo", { input })).body.content).toEqual([{ type: "text", text: "My text input" }])
      const echoed = await infer("echo_request_messages", { input: { system: input.system, messages: [input.messages[2]] } })
      expect(echoed.body.content).toEqual([{
        type: "text",
        text: "{\"system\":\"My first system input.\",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"My text input\"}]}]}"
      }])
    })

    it("echo_extra_info: the request's extra_body and extra_headers as written, and the variant's", async () => {
      const extraBody = { model_name: "dummy::echo_extra_info", provider_name: "dummy", pointer: "/thinking", value: { type: "enabled", budget_tokens: 1024 } }
      const bodyAnswer = await infer("echo_extra_info", { extra_body: [extraBody] })
      expect(JSON.parse(bodyAnswer.body.content[0].text)).toEqual({
        extra_body: { inference_extra_body: [extraBody] },
        extra_headers: { variant_extra_headers: null, inference_extra_headers: [] }
      })
      const extraHeader = { model_name: "dummy::echo_extra_info", provider_name: "dummy", name: "x-my-extra-header", value: "my-extra-header-value" }
      // an entry scoped to another model is not this call's
      const other = { model_name: "dummy::other", name: "x-other", value: "no" }
      const headerAnswer = await infer("echo_extra_info", { extra_headers: [extraHeader, other] })
      expect(JSON.parse(headerAnswer.body.content[0].text)).toEqual({
        extra_body: { inference_extra_body: [] },
        extra_headers: { variant_extra_headers: null, inference_extra_headers: [extraHeader] }
      })
      const configured = await gateway.post("/inference", { function_name: "extra_info", input: hello })
      expect(JSON.parse(configured.body.content[0].text)).toEqual({
        extra_body: { extra_body: [{ pointer: "/temperature", value: 0.5 }], inference_extra_body: [] },
        extra_headers: { variant_extra_headers: [{ name: "x-variant", value: "v" }], inference_extra_headers: [] }
      })
    })

    it("fails with TensorZero's messages: error*, llm_judge::error, multiple-text-blocks; test_key with another key", async () => {
      for (const [model, message, body] of [
        ["error", "Error sending request to Dummy provider for model 'error'.", {}],
        ["error_with_a_suffix", "Error sending request to Dummy provider for model 'error_with_a_suffix'.", {}],
        ["llm_judge::error", "Dummy error in inference", {}],
        ["multiple-text-blocks", "First message must have exactly two text blocks", {}]
      ] as const) {
        const answer = await infer(model, body)
        expect(answer.status, model).toBe(502)
        expect(answer.body.error, model).toContain(message)
      }
      const two = await infer("multiple-text-blocks", {
        input: { messages: [{ role: "user", content: [{ type: "text", text: "Hello, world!" }, { type: "text", text: "Hello, world!" }] }] }
      })
      expect(two.body.content).toEqual([{ type: "text", text: megumin }])
      const keyed = (key: string) => gateway.post("/inference", { model_name: "keyed", input: hello, credentials: { dummy_key: key } })
      expect((await keyed("good_key")).body.content).toEqual([{ type: "text", text: megumin }])
      const refused = await keyed("bad_key")
      expect(refused.status).toBe(502)
      expect(refused.body.error).toContain("Invalid API key for Dummy provider")
    })

    it("flaky_*: every even-numbered call fails", async () => {
      const statuses: Array<number> = []
      for (let i = 0; i < 4; i++) {
        const answer = await infer("flaky_over_http")
        statuses.push(answer.status)
        if (answer.status !== 200) expect(answer.body.error).toContain(`Flaky model 'flaky_over_http' failed on call number ${i + 1}`)
      }
      expect(statuses).toEqual([200, 502, 200, 502])
    })
  })

  describe("streamed", () => {
    it("good, an unknown name and the names without a stream of their own: TensorZero's 16 pieces, then usage 10 + 16", async () => {
      for (const model of ["good", "unknown_name", "bad_tool", "null", "echo"]) {
        const { contents, final } = await streamed(model)
        expect(contents, model).toEqual(wally.map((piece) => [{ type: "text", id: "0", text: piece }]))
        expect(final, model).toMatchObject({ content: [], usage: { input_tokens: 10, output_tokens: 16 }, finish_reason: "stop" })
      }
    })

    it("reasoner: two thought pieces, then the text pieces, usage 10 + 18", async () => {
      const { contents, final } = await streamed("reasoner")
      expect(contents).toEqual([
        [{ type: "thought", id: "0", text: "hmmm" }],
        [{ type: "thought", id: "0", text: "hmmm" }],
        ...wally.map((piece) => [{ type: "text", id: "0", text: piece }])
      ])
      expect(final.usage).toEqual({ input_tokens: 10, output_tokens: 18 })
    })

    it("json: its own streamed JSON, usage 10 + 5", async () => {
      const { contents, final } = await streamed("json")
      expect(contents).toEqual(["{\"name\"", ":\"John\"", ",\"age\"", ":30", "}"].map((piece) => [{ type: "text", id: "0", text: piece }]))
      expect(final).toMatchObject({ usage: { input_tokens: 10, output_tokens: 5 }, finish_reason: "stop" })
    })

    it("tool and tool_split_name: the name in the first pieces only, the arguments in five", async () => {
      const args = ["{\"location\"", ":\"Brooklyn\"", ",\"units\"", ":\"celsius", "\"}"]
      for (const [model, names] of [["tool", ["get_temperature", "", "", "", ""]], ["tool_split_name", ["get_temp", "erature", "", "", ""]]] as const) {
        const { contents, final } = await streamed(model, { additional_tools: [temperatureTool] })
        expect(contents, model).toEqual(names.map((name, i) => [{ type: "tool_call", id: "0", raw_name: name, raw_arguments: args[i] }]))
        expect(final, model).toMatchObject({ usage: { input_tokens: 10, output_tokens: 5 }, finish_reason: "tool_call" })
      }
    })

    it("error* answers a 502 before the stream; fatal_stream_error sends two pieces, then an error event", async () => {
      const refused = await stream("error")
      expect(refused.status).toBe(502)
      expect(JSON.parse(refused.raw).error).toContain("Error sending request to Dummy provider for model 'error'.")
      const fatal = await stream("fatal_stream_error")
      expect(fatal.status).toBe(200)
      expect(fatal.events.slice(0, 2).map((event) => event.content)).toEqual([[{ type: "text", id: "0", text: "Wally," }], [{ type: "text", id: "0", text: " the" }]])
      expect(fatal.events.at(-1).error).toContain("Dummy fatal error")
      expect(fatal.events).not.toContain("[DONE]")
    })
  })

  describe("embeddings", () => {
    it("answers a vector of 1536 zeros per input and usage 10, configured or as dummy::<name>", async () => {
      for (const model of ["gateway::embedding_model_name::zeros", "dummy::anything"]) {
        const answer = await gateway.post("/openai/v1/embeddings", { model, input: ["a", "b"], encoding_format: "float" })
        expect(answer.status, JSON.stringify(answer.body)).toBe(200)
        expect(answer.body.data).toEqual([
          { object: "embedding", index: 0, embedding: new Array(1536).fill(0) },
          { object: "embedding", index: 1, embedding: new Array(1536).fill(0) }
        ])
        expect(answer.body.usage).toEqual({ prompt_tokens: 10, total_tokens: 10 })
      }
    })

    it("error*: a 502 with TensorZero's message", async () => {
      const answer = await gateway.post("/openai/v1/embeddings", { model: "dummy::error", input: "a" })
      expect(answer.status).toBe(502)
      expect(JSON.stringify(answer.body)).toContain("Error sending request to Dummy provider for model 'error'.")
    })
  })
})
