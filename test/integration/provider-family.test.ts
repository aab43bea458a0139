/**
 * POST /inference through the members of the Chat Completions family where they differ from
 * OpenAI (what the conformance run does not show): DeepSeek's reasoning_content as thoughts
 * (never sent back) and its JSON mode in place of structured output, Groq's renamed
 * `max_completion_tokens`, TGI's grammar, SGLang without a key (`api_key_location = "none"`),
 * and the start-up rules: a missing default key of a positive-weight variant, no short-hand for
 * a self-hosted server.
 */
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { completion, type FakeOpenAi, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, runGateway, startGateway, writeFiles } from "../support/gateway.ts"

const outputSchema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }

const config = (fake: FakeOpenAi) => `
[models.deepseek]
routing = ["p"]
[models.deepseek.providers.p]
type = "deepseek"
model_name = "deepseek-reasoner"
api_base = "${fake.url}/"

[models.groq]
routing = ["p"]
[models.groq.providers.p]
type = "groq"
model_name = "llama-3.3-70b-versatile"
api_base = "${fake.url}/openai/v1"

[models.tgi]
routing = ["p"]
[models.tgi.providers.p]
type = "tgi"
model_name = "tgi"
api_base = "${fake.url}/v1/"

[models.sglang]
routing = ["p"]
[models.sglang.providers.p]
type = "sglang"
model_name = "qwen"
api_base = "${fake.url}/v1/"
api_key_location = "none"

[functions.deepseek]
type = "chat"
[functions.deepseek.variants.v]
type = "chat_completion"
model = "deepseek"
seed = 7
temperature = 0.3

[functions.deepseek_json]
type = "json"
output_schema = "output.json"
[functions.deepseek_json.variants.v]
type = "chat_completion"
model = "deepseek"
json_mode = "strict"

[functions.groq]
type = "chat"
[functions.groq.variants.v]
type = "chat_completion"
model = "groq"
max_tokens = 100
verbosity = "low"
service_tier = "flex"

[functions.tgi_json]
type = "json"
output_schema = "output.json"
[functions.tgi_json.variants.v]
type = "chat_completion"
model = "tgi"
json_mode = "strict"

[functions.sglang]
type = "chat"
[functions.sglang.variants.v]
type = "chat_completion"
model = "sglang"

# a hosted member's short-hand is a model name (never called here: it would reach api.deepseek.com)
[functions.shorthand]
type = "chat"
[functions.shorthand.variants.v]
type = "chat_completion"
model = "deepseek::deepseek-chat"
`

const input = (text: string) => ({ messages: [{ role: "user", content: [{ type: "text", text }] }] })

describe("Chat Completions family members", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    gateway = await startGateway({
      config: config(fake),
      files: { "output.json": JSON.stringify(outputSchema) },
      env: { DEEPSEEK_API_KEY: "sk-deepseek", GROQ_API_KEY: "gsk-groq", TGI_API_KEY: "hf-tgi", SGLANG_API_KEY: undefined }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  describe("deepseek", () => {
    it("returns reasoning_content as a thought before the text, and does not send it back on the next turn", async () => {
      fake.script.push({ kind: "json", body: completion({ reasoning_content: "9.11 < 9.8", content: "9.8 is greater" }) })
      const first = await gateway.post("/inference", { function_name: "deepseek", input: input("9.11 or 9.8?") })
      expect(first.status, JSON.stringify(first.body)).toBe(200)
      expect(first.body.content).toEqual([{ type: "thought", text: "9.11 < 9.8", provider_type: "deepseek" }, { type: "text", text: "9.8 is greater" }])
      const request = fake.requests[0]
      expect(request.path).toBe("/chat/completions")
      expect(request.headers.authorization).toBe("Bearer sk-deepseek")
      // DeepSeek takes no seed
      expect(request.body).toMatchObject({ model: "deepseek-reasoner", temperature: 0.3 })
      expect(request.body).not.toHaveProperty("seed")

      const second = await gateway.post("/inference", {
        function_name: "deepseek",
        input: {
          messages: [
            ...input("9.11 or 9.8?").messages,
            { role: "assistant", content: first.body.content },
            ...input("and 9.9?").messages
          ]
        }
      })
      expect(second.status).toBe(200)
      // DeepSeek answers 400 when reasoning_content comes back: the thought is left out
      expect(fake.requests[1].body.messages).toEqual([
        { role: "user", content: "9.11 or 9.8?" },
        { role: "assistant", content: "9.8 is greater" },
        { role: "user", content: "and 9.9?" }
      ])
    })

    it("streams reasoning_content as thought deltas", async () => {
      const chunk = (delta: object, extra: object = {}) => ({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, ...extra }] })
      fake.script.push({
        kind: "stream",
        chunks: [
          chunk({ role: "assistant", reasoning_content: "Think" }),
          chunk({ reasoning_content: "ing" }),
          chunk({ content: "Done" }),
          chunk({}, { finish_reason: "stop" }),
          {
            id: "c",
            object: "chat.completion.chunk",
            choices: [],
            usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13, prompt_cache_hit_tokens: 5, prompt_cache_miss_tokens: 4 }
          }
        ]
      })
      const { status, events } = await gateway.stream("/inference", { function_name: "deepseek", input: input("hi"), stream: true })
      expect(status).toBe(200)
      expect(events.slice(0, -2).flatMap((event) => event.content)).toEqual([
        { type: "thought", id: "0", text: "Think" },
        { type: "thought", id: "0", text: "ing" },
        { type: "text", id: "0", text: "Done" }
      ])
      expect(events.at(-2)).toMatchObject({ usage: { input_tokens: 9, output_tokens: 4 }, finish_reason: "stop" })
      expect(fake.requests[0].body.stream_options).toEqual({ include_usage: true })
    })

    it("asks for JSON Output (json_object) for json_mode strict, and checks the schema on the answer itself", async () => {
      fake.script.push({ kind: "json", body: completion({ content: "{\"answer\":\"yes\"}" }) })
      fake.script.push({ kind: "json", body: completion({ content: "{\"other\":1}" }) })
      const valid = await gateway.post("/inference", { function_name: "deepseek_json", input: input("answer in json") })
      expect(valid.status).toBe(200)
      expect(valid.body.output).toEqual({ raw: "{\"answer\":\"yes\"}", parsed: { answer: "yes" } })
      expect(fake.requests[0].body.response_format).toEqual({ type: "json_object" })
      const invalid = await gateway.post("/inference", { function_name: "deepseek_json", input: input("answer in json") })
      expect(invalid.status).toBe(200)
      expect(invalid.body.output).toEqual({ raw: "{\"other\":1}", parsed: null })
    })
  })

  it("groq: sends max_tokens as max_completion_tokens, its service_tier, and no verbosity", async () => {
    const { status } = await gateway.post("/inference", { function_name: "groq", input: input("hi") })
    expect(status).toBe(200)
    const request = fake.requests[0]
    expect(request.path).toBe("/openai/v1/chat/completions")
    expect(request.headers.authorization).toBe("Bearer gsk-groq")
    expect(request.body).toMatchObject({ model: "llama-3.3-70b-versatile", max_completion_tokens: 100, service_tier: "flex" })
    expect(request.body).not.toHaveProperty("max_tokens")
    expect(request.body).not.toHaveProperty("verbosity")
  })

  it("tgi: asks for json_mode strict with its grammar (response_format type json, the schema as value)", async () => {
    fake.script.push({ kind: "json", body: completion({ content: "{\"answer\":\"tgi\"}" }) })
    const { status, body } = await gateway.post("/inference", { function_name: "tgi_json", input: input("answer in json") })
    expect(status).toBe(200)
    expect(body.output.parsed).toEqual({ answer: "tgi" })
    expect(fake.requests[0].headers.authorization).toBe("Bearer hf-tgi")
    expect(fake.requests[0].body.response_format).toEqual({ type: "json", value: outputSchema })
  })

  it("sglang with api_key_location = \"none\": calls its api_base without an Authorization header", async () => {
    const { status, body } = await gateway.post("/inference", { function_name: "sglang", input: input("hi") })
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body.content).toEqual([{ type: "text", text: "Hello from fake OpenAI" }])
    expect(fake.requests[0].path).toBe("/v1/chat/completions")
    expect(fake.requests[0].headers).not.toHaveProperty("authorization")
  })
})

describe("Chat Completions family start-up", () => {
  const startup = async (config: string, env: Record<string, string | undefined>) => {
    const dir = writeFiles({ "config.toml": config })
    return runGateway(["--config-file", path.join(dir, "config.toml")], { env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0", ...env }, cwd: dir })
  }

  it("refuses to start when a positive-weight variant's vllm provider has no VLLM_API_KEY (the default location)", async () => {
    const result = await startup(
      `
[models.local]
routing = ["p"]
[models.local.providers.p]
type = "vllm"
model_name = "llama"
api_base = "http://127.0.0.1:1/v1/"

[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "local"
`,
      { VLLM_API_KEY: undefined }
    )
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain("VLLM_API_KEY")
  })

  it("has no short-hand for the self-hosted servers: `vllm::<model>` is an unknown model", async () => {
    const result = await startup(
      `
[functions.f]
type = "chat"
[functions.f.variants.v]
type = "chat_completion"
model = "vllm::llama"
`,
      { VLLM_API_KEY: "k" }
    )
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain(`unknown model "vllm::llama"`)
  })
})
