/**
 * `POST /anthropic/v1/messages/count_tokens` (issue 37) driven by the official
 * `@anthropic-ai/sdk` (`messages.countTokens`) with `baseURL: <gateway>/anthropic`: the count is
 * asked of the model's first provider when its type has a token-counting API (fake Anthropic,
 * fake Vertex Anthropic, fake Bedrock: what each received, authenticated as an inference is),
 * and is a 400 naming the model otherwise; a function is counted through its first variant,
 * rendered with its templates; errors are the SDK's own.
 */
import Anthropic from "@anthropic-ai/sdk"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeAnthropic, fakeTokenCount, startFakeAnthropic } from "../support/fakeAnthropic.ts"
import { type FakeAws, fakeAwsIdentity, fakeConverseTokenCount, startFakeBedrock } from "../support/fakeBedrock.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const bedrockModelId = "anthropic.claude-sonnet-4-20250514-v1:0"

const config = (anthropic: FakeAnthropic, bedrock: FakeAws) => `
[models."claude-sonnet-4-5"]
routing = ["anthropic", "openai"]
[models."claude-sonnet-4-5".providers.anthropic]
type = "anthropic"
model_name = "claude-sonnet-4-5"
api_base = "${anthropic.apiBase}"
api_key_location = "env::TEST_ANTHROPIC_KEY"
extra_headers = [{ name = "anthropic-beta", value = "token-counting-test" }]
[models."claude-sonnet-4-5".providers.openai]
type = "openai"
model_name = "gpt-4o-mini"
api_base = "http://127.0.0.1:9/v1"
api_key_location = "none"

[models.vertex]
routing = ["v"]
[models.vertex.providers.v]
type = "gcp_vertex_anthropic"
model_id = "claude-sonnet-4-5@20250929"
location = "us-east5"
project_id = "fake-project"
api_base = "${anthropic.url}"
credential_location = "path::service-account.json"

[models.bedrock]
routing = ["b"]
[models.bedrock.providers.b]
type = "aws_bedrock"
model_id = "${bedrockModelId}"
region = "us-east-1"
endpoint_url = "${bedrock.url}"

# answered first by an OpenAI-type provider, though an Anthropic one follows
[models.gpt]
routing = ["openai", "anthropic"]
[models.gpt.providers.openai]
type = "openai"
model_name = "gpt-4o-mini"
api_base = "http://127.0.0.1:9/v1"
api_key_location = "none"
[models.gpt.providers.anthropic]
type = "anthropic"
model_name = "claude-sonnet-4-5"
api_base = "${anthropic.apiBase}"
api_key_location = "env::TEST_ANTHROPIC_KEY"

[functions.assistant]
type = "chat"
[functions.assistant.variants.main]
type = "chat_completion"
model = "claude-sonnet-4-5"
system_template = "system.minijinja"
weight = 1
[functions.assistant.variants.gpt]
type = "chat_completion"
model = "gpt"
weight = 0
[functions.assistant.variants.best]
type = "experimental_best_of_n_sampling"
candidates = ["main", "gpt"]
weight = 0
evaluator = { model = "claude-sonnet-4-5" }
`

const files = (anthropic: FakeAnthropic) => ({
  "service-account.json": anthropic.serviceAccount.json,
  "system.minijinja": "You answer questions about the weather."
})

const env = {
  TEST_ANTHROPIC_KEY: "sk-ant-upstream",
  AWS_ACCESS_KEY_ID: fakeAwsIdentity.accessKeyId,
  AWS_SECRET_ACCESS_KEY: fakeAwsIdentity.secretAccessKey,
  AWS_SESSION_TOKEN: undefined,
  AWS_BEARER_TOKEN_BEDROCK: undefined
}

const weatherTool = {
  name: "get_weather",
  description: "The weather of a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] }
}

const question = [{ role: "user" as const, content: "What is the weather in Paris today?" }]

describe("count_tokens with the official @anthropic-ai/sdk", () => {
  let anthropic: FakeAnthropic
  let bedrock: FakeAws
  let gateway: RunningGateway
  let client: Anthropic

  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ apiKey: "sk-ant-upstream" })
    bedrock = await startFakeBedrock()
    gateway = await startGateway({ config: config(anthropic, bedrock), files: files(anthropic), env })
    client = new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: "unused-without-auth", maxRetries: 0 })
  }, 60_000)
  afterAll(async () => {
    await gateway?.stop()
    await anthropic?.close()
    await bedrock?.close()
  })
  beforeEach(() => {
    anthropic.requests.length = 0
    anthropic.script.length = 0
    bedrock.requests.length = 0
    bedrock.script.length = 0
  })

  const failureOf = (params: Parameters<Anthropic["messages"]["countTokens"]>[0]) => client.messages.countTokens(params).catch((error: unknown) => error)
  /** the message of the Anthropic error body the SDK raised */
  const messageOf = (error: unknown): string => ((error as { error?: { error?: { message?: string } } }).error?.error?.message ?? String(error))

  it("counts on Anthropic: the Messages body without max_tokens nor sampling, with the provider's key and headers", async () => {
    // an older API version's sampling and a max_tokens: taken and not sent on
    const ignored = { max_tokens: 300, temperature: 0.2, top_k: 40, stop_sequences: ["END"] } as {}
    const counted = await client.messages.countTokens({
      model: "claude-sonnet-4-5",
      system: "Be brief.",
      messages: question,
      tools: [weatherTool],
      tool_choice: { type: "auto" },
      thinking: { type: "enabled", budget_tokens: 1024 },
      ...ignored
    })
    expect(anthropic.requests).toHaveLength(1)
    const received = anthropic.requests[0]
    expect(received.path).toBe("/v1/messages/count_tokens")
    expect(received.headers["x-api-key"]).toBe("sk-ant-upstream")
    expect(received.headers["anthropic-beta"]).toBe("token-counting-test")
    expect(received.body).toEqual({
      model: "claude-sonnet-4-5",
      system: "Be brief.",
      messages: [{ role: "user", content: [{ type: "text", text: "What is the weather in Paris today?" }] }],
      thinking: { type: "enabled", budget_tokens: 1024 },
      tools: [weatherTool],
      tool_choice: { type: "auto" }
    })
    expect(counted).toEqual({ input_tokens: fakeTokenCount(received.body) })
    expect(counted.input_tokens).toBeGreaterThan(10)
  })

  it("counts on Vertex AI: the location's count-tokens model, the model in the body, the service account's token", async () => {
    const counted = await client.messages.countTokens({ model: "gateway::model_name::vertex", messages: question })
    // "What is the weather in Paris today?": 35 characters, a token per 4
    expect(counted).toEqual({ input_tokens: 9 })
    const received = anthropic.requests.at(-1)!
    expect(received.path).toBe("/v1/projects/fake-project/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict")
    expect(received.headers.authorization).toMatch(/^Bearer ya29\.fake-token-\d+$/)
    expect(received.body).toEqual({
      anthropic_version: "vertex-2023-10-16",
      messages: [{ role: "user", content: [{ type: "text", text: "What is the weather in Paris today?" }] }],
      model: "claude-sonnet-4-5@20250929"
    })
  })

  it("counts on Bedrock: CountTokens with the Converse input, signed with SigV4", async () => {
    const counted = await client.messages.countTokens({ model: "bedrock", system: "Be brief.", messages: question, tools: [weatherTool] })
    expect(bedrock.requests).toHaveLength(1)
    const received = bedrock.requests[0]
    expect(received.path).toBe(`/model/${encodeURIComponent(bedrockModelId)}/count-tokens`)
    expect(received.auth).toBe("sigv4")
    expect(String(received.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK00001\/\d{8}\/us-east-1\/bedrock\/aws4_request/)
    expect(received.body).toEqual({
      input: {
        converse: {
          messages: [{ role: "user", content: [{ text: "What is the weather in Paris today?" }] }],
          system: [{ text: "Be brief." }],
          toolConfig: {
            tools: [{ toolSpec: { name: "get_weather", description: "The weather of a city", inputSchema: { json: weatherTool.input_schema } } }],
            toolChoice: { auto: {} }
          }
        }
      }
    })
    expect(counted).toEqual({ input_tokens: fakeConverseTokenCount(received.body.input.converse) })
  })

  it("counts a function through its first variant, its input rendered with the variant's templates", async () => {
    const counted = await client.messages.countTokens({ model: "gateway::function_name::assistant", messages: question })
    expect(anthropic.requests).toHaveLength(1)
    expect(anthropic.requests[0].body).toEqual({
      model: "claude-sonnet-4-5",
      system: "You answer questions about the weather.",
      messages: [{ role: "user", content: [{ type: "text", text: "What is the weather in Paris today?" }] }]
    })
    expect(counted).toEqual({ input_tokens: fakeTokenCount(anthropic.requests[0].body) })
  })

  it("refuses, naming the model, a model whose first provider has no token-counting API (an OpenAI-type one, the dummy)", async () => {
    const openAi = await failureOf({ model: "gpt", messages: question })
    expect(openAi).toBeInstanceOf(Anthropic.BadRequestError)
    expect((openAi as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: "error", error: { type: "invalid_request_error" } })
    expect(messageOf(openAi)).toContain(`model "gpt" is answered first by provider "openai" of type openai`)
    expect(messageOf(openAi)).toContain("anthropic, gcp_vertex_anthropic and aws_bedrock have one")

    const pinned = await failureOf({ model: "gateway::function_name::assistant::variant_name::gpt", messages: question })
    expect(pinned).toBeInstanceOf(Anthropic.BadRequestError)
    expect(messageOf(pinned)).toContain(`model "gpt"`)

    const dummy = await failureOf({ model: "gateway::model_name::dummy::hello", messages: question })
    expect(dummy).toBeInstanceOf(Anthropic.BadRequestError)
    expect(messageOf(dummy)).toContain(`model "dummy::hello" is answered first by provider "dummy" of type dummy`)

    const sampled = await failureOf({ model: "gateway::function_name::assistant::variant_name::best", messages: question })
    expect(sampled).toBeInstanceOf(Anthropic.BadRequestError)
    expect(messageOf(sampled)).toContain(`variant "best" of function "assistant" is of type experimental_best_of_n_sampling`)
    expect(anthropic.requests).toHaveLength(0)
  })

  it("an unknown model is the SDK's NotFoundError", async () => {
    const unknown = await failureOf({ model: "claude-unknown", messages: question })
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError)
    expect(messageOf(unknown)).toContain("claude-unknown")
  })

  it("a provider's failure is the error an inference's would be: the SDK's InternalServerError, or its BadRequestError for a request the provider refused", async () => {
    anthropic.script.push({ kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" })
    const overloaded = await failureOf({ model: "claude-sonnet-4-5", messages: question })
    expect(overloaded).toBeInstanceOf(Anthropic.InternalServerError)
    expect((overloaded as InstanceType<typeof Anthropic.InternalServerError>).status).toBe(529)
    expect((overloaded as InstanceType<typeof Anthropic.InternalServerError>).error).toMatchObject({ type: "error", error: { type: "overloaded_error" } })
    expect(messageOf(overloaded)).toContain("overloaded_error: Overloaded")
    // the count is asked of the first provider only: no fallback
    expect(anthropic.requests).toHaveLength(1)

    bedrock.script.push({ status: 400, message: "The provided model doesn't support counting tokens.", errorType: "ValidationException" })
    const refused = await failureOf({ model: "bedrock", messages: question })
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError)
    expect(messageOf(refused)).toContain("The provided model doesn't support counting tokens.")
  })

  it("a request the gateway cannot translate is a 400 naming the field; max_tokens stays required on the messages route", async () => {
    const noMessages = await failureOf({ model: "claude-sonnet-4-5" } as any)
    expect(noMessages).toBeInstanceOf(Anthropic.BadRequestError)
    expect(messageOf(noMessages)).toContain("messages")
    const noMax = await client.messages.create({ model: "claude-sonnet-4-5", messages: question } as any).catch((error: unknown) => error)
    expect(noMax).toBeInstanceOf(Anthropic.BadRequestError)
    expect(messageOf(noMax)).toContain("max_tokens")
    expect(anthropic.requests).toHaveLength(0)
  })
})
