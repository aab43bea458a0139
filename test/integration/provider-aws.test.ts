/**
 * POST /inference through the `aws_bedrock` and `aws_sagemaker` providers against a fake AWS
 * (test/support/fakeBedrock.ts) that verifies SigV4 signatures against the secret, takes
 * Bedrock API keys as bearer tokens, and streams in AWS's binary event-stream framing cut in
 * small network pieces: what the upstream receives and what the gateway answers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { conformanceImage } from "../support/conformance.ts"
import { type FakeAws, fakeAwsIdentity, startFakeBedrock } from "../support/fakeBedrock.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const modelId = "us.anthropic.claude-sonnet-4-20250514-v1:0"

const config = (url: string) => `
[models.bedrock]
routing = ["b"]
[models.bedrock.providers.b]
type = "aws_bedrock"
model_id = "${modelId}"
endpoint_url = "${url}"
extra_body = [{ pointer = "/additionalModelRequestFields/top_k", value = 5 }]
extra_headers = [{ name = "X-Amzn-Bedrock-Trace", value = "ENABLED" }]

[models.bedrock_key]
routing = ["b"]
[models.bedrock_key.providers.b]
type = "aws_bedrock"
model_id = "${modelId}"
region = "us-east-1"
endpoint_url = "${url}"
api_key_location = "env::BEDROCK_API_KEY"

[models.bedrock_wrong_key]
routing = ["b"]
[models.bedrock_wrong_key.providers.b]
type = "aws_bedrock"
model_id = "${modelId}"
endpoint_url = "${url}"
api_key_location = "env::WRONG_API_KEY"

[models.sagemaker]
routing = ["s"]
[models.sagemaker.providers.s]
type = "aws_sagemaker"
endpoint_name = "my-endpoint"
hosted_provider = "openai"
model_name = "container-model"
endpoint_url = "${url}"

[tools.get_weather]
description = "Get the weather for a city"
parameters = "get_weather.json"

[functions.chat]
type = "chat"
tools = ["get_weather"]
[functions.chat.variants.v]
type = "chat_completion"
model = "bedrock"

[functions.thinking]
type = "chat"
[functions.thinking.variants.v]
type = "chat_completion"
model = "bedrock"
max_tokens = 2048
temperature = 1
thinking_budget_tokens = 1024

[functions.extract]
type = "json"
output_schema = "output.json"
[functions.extract.variants.strict]
type = "chat_completion"
model = "bedrock"
weight = 1
json_mode = "strict"
[functions.extract.variants.tool]
type = "chat_completion"
model = "bedrock"
weight = 0
json_mode = "tool"
`

const files = {
  "get_weather.json": JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
  "output.json": JSON.stringify({ type: "object", properties: { answer: { type: "string" } }, required: ["answer"] })
}

const env = {
  AWS_ACCESS_KEY_ID: fakeAwsIdentity.accessKeyId,
  AWS_SECRET_ACCESS_KEY: fakeAwsIdentity.secretAccessKey,
  AWS_SESSION_TOKEN: undefined,
  AWS_BEARER_TOKEN_BEDROCK: undefined,
  AWS_REGION: fakeAwsIdentity.region,
  AWS_DEFAULT_REGION: undefined,
  BEDROCK_API_KEY: fakeAwsIdentity.bearerToken,
  WRONG_API_KEY: "ABSKnotTheRightKey"
}

const user = (content: unknown) => ({ messages: [{ role: "user", content }] })

/** the content deltas of a streamed answer (all events but the last, [DONE]) */
const deltas = (events: Array<any>) => events.filter((event) => event !== "[DONE]").flatMap((event) => event.content ?? [])

const joined = (parts: Array<any>, type: string) => parts.filter((part) => part.type === type).map((part) => part.text).join("")

describe("the aws_bedrock and aws_sagemaker providers through the gateway", () => {
  let fake: FakeAws
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeBedrock()
    gateway = await startGateway({ config: config(fake.url), files, env })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => {
    fake.requests.length = 0
    fake.script.length = 0
  })

  const infer = async (body: Record<string, unknown>) => {
    const response = await gateway.post("/inference", body)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body
  }

  it("answers a plain inference through Converse, signed with SigV4 for the region of AWS_REGION", async () => {
    const body = await infer({ function_name: "chat", input: { system: "Be brief.", ...user("hi") } })
    expect(body.content).toEqual([{ type: "text", text: "Hello from fake Bedrock" }])
    expect(body.usage).toMatchObject({ input_tokens: 10, output_tokens: 5 })
    expect(body.finish_reason).toBe("stop")
    expect(fake.requests).toHaveLength(1)
    const request = fake.requests[0]
    expect(request.auth).toBe("sigv4")
    // the model id is one path segment: its ':' is encoded
    expect(request.path).toBe(`/model/${encodeURIComponent(modelId)}/converse`)
    expect(request.headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${fakeAwsIdentity.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, SignedHeaders=`)
    )
    expect(request.body).toMatchObject({
      system: [{ text: "Be brief." }],
      messages: [{ role: "user", content: [{ text: "hi" }] }],
      toolConfig: { tools: [{ toolSpec: { name: "get_weather", inputSchema: { json: { properties: { city: { type: "string" } } } } } }], toolChoice: { auto: {} } }
    })
  })

  it("signs extra_headers and sends extra_body", async () => {
    await infer({ function_name: "chat", input: user("hi") })
    const request = fake.requests[0]
    expect(request.headers["x-amzn-bedrock-trace"]).toBe("ENABLED")
    expect(request.headers.authorization).toMatch(/SignedHeaders=[^,]*x-amzn-bedrock-trace/)
    expect(request.body.additionalModelRequestFields).toEqual({ top_k: 5 })
  })

  it("signs a request's own extra_headers too", async () => {
    await infer({ function_name: "chat", input: user("hi"), extra_headers: [{ name: "x-custom-request", value: "yes", model_name: "bedrock" }] })
    const request = fake.requests[0]
    expect(request.headers["x-custom-request"]).toBe("yes")
    expect(request.headers.authorization).toMatch(/SignedHeaders=[^,]*x-custom-request/)
  })

  it("streams through ConverseStream, its event-stream messages split across network chunks", async () => {
    fake.pieceBytes = 5
    const { status, events } = await gateway.stream("/inference", { function_name: "chat", input: user("conformance:stream"), stream: true })
    fake.pieceBytes = 7
    expect(status).toBe(200)
    expect(fake.requests[0].path).toBe(`/model/${encodeURIComponent(modelId)}/converse-stream`)
    const parts = deltas(events)
    expect(parts.filter((part) => part.type === "text").length).toBeGreaterThanOrEqual(2)
    expect(joined(parts, "text")).toBe("conformance text")
    const last = events.filter((event) => event !== "[DONE]").at(-1)
    expect(last.usage).toMatchObject({ input_tokens: 10, output_tokens: 5 })
    expect(last.finish_reason).toBe("stop")
  })

  it("returns parallel tool calls, whole and streamed", async () => {
    const body = await infer({ function_name: "chat", input: user("conformance:parallel_tool_calls") })
    expect(body.content).toMatchObject([
      { type: "tool_call", id: "call_1", raw_name: "get_weather", raw_arguments: `{"city":"Paris"}`, arguments: { city: "Paris" } },
      { type: "tool_call", id: "call_2", raw_name: "get_weather", raw_arguments: `{"city":"London"}` }
    ])
    expect(body.finish_reason).toBe("tool_call")
    const { events } = await gateway.stream("/inference", { function_name: "chat", input: user("conformance:parallel_tool_calls"), stream: true })
    const calls = deltas(events).filter((part) => part.type === "tool_call")
    const byId = (id: string) => calls.filter((call) => call.id === id).map((call) => call.raw_arguments).join("")
    expect(byId("call_1")).toBe(`{"city":"Paris"}`)
    expect(byId("call_2")).toBe(`{"city":"London"}`)
    expect(calls.find((call) => call.id === "call_2")?.raw_name).toBe("get_weather")
  })

  it("sends tool results back as toolResult blocks after the assistant's toolUse", async () => {
    await infer({
      function_name: "chat",
      input: {
        messages: [
          { role: "user", content: "weather?" },
          { role: "assistant", content: [{ type: "tool_call", id: "call_1", name: "get_weather", arguments: { city: "Paris" } }] },
          { role: "user", content: [{ type: "tool_result", id: "call_1", name: "get_weather", result: "sunny" }] }
        ]
      }
    })
    expect(fake.requests[0].body.messages).toEqual([
      { role: "user", content: [{ text: "weather?" }] },
      { role: "assistant", content: [{ toolUse: { toolUseId: "call_1", name: "get_weather", input: { city: "Paris" } } }] },
      { role: "user", content: [{ toolResult: { toolUseId: "call_1", content: [{ text: "sunny" }] } }] }
    ])
  })

  it("forces a specific tool, and offers no tools for tool_choice none (Converse has no none)", async () => {
    await infer({ function_name: "chat", input: user("hi"), tool_choice: { specific: "get_weather" } })
    expect(fake.requests[0].body.toolConfig.toolChoice).toEqual({ tool: { name: "get_weather" } })
    await infer({ function_name: "chat", input: user("hi"), tool_choice: "none" })
    expect(fake.requests[1].body.toolConfig).toBeUndefined()
    await infer({ function_name: "chat", input: user("hi"), tool_choice: "required" })
    expect(fake.requests[2].body.toolConfig.toolChoice).toEqual({ any: {} })
  })

  it("json_mode strict asks for the schema in the system prompt; tool forces the respond tool", async () => {
    const strict = await infer({ function_name: "extract", input: user("conformance:json_strict") })
    expect(strict.output.parsed).toEqual({ answer: "conformance" })
    expect(JSON.stringify(fake.requests[0].body.system)).toContain(`\\"answer\\"`)
    const tool = await infer({ function_name: "extract", variant_name: "tool", input: user("conformance:json_tool") })
    expect(tool.output.parsed).toEqual({ answer: "conformance" })
    expect(fake.requests[1].body.toolConfig.toolChoice).toEqual({ tool: { name: "respond" } })
  })

  it("sends an image and a PDF as bytes", async () => {
    const pdf = Buffer.from("%PDF-1.4 fake").toString("base64")
    const body = await infer({
      function_name: "chat",
      input: user([
        { type: "text", text: "conformance:image" },
        { type: "file", file_type: "base64", mime_type: conformanceImage.mimeType, data: conformanceImage.data },
        { type: "file", file_type: "base64", mime_type: "application/pdf", data: pdf }
      ])
    })
    expect(body.content).toEqual([{ type: "text", text: "image received" }])
    expect(fake.requests[0].body.messages[0].content.slice(1)).toEqual([
      { image: { format: "png", source: { bytes: conformanceImage.data } } },
      { document: { format: "pdf", name: "document-2", source: { bytes: pdf } } }
    ])
  })

  it("refuses a file by URL, naming the provider", async () => {
    const response = await gateway.post("/inference", {
      function_name: "chat",
      input: user([{ type: "file", file_type: "url", url: "https://example.com/cat.png", mime_type: "image/png" }])
    })
    expect(response.status).toBe(400)
    expect(JSON.stringify(response.body)).toContain("aws_bedrock provider takes files as base64 data, not as a URL")
    expect(fake.requests).toHaveLength(0)
  })

  it("returns a thought with its signature, and sends it back in the next turn (whole and streamed)", async () => {
    const first = await infer({ function_name: "thinking", input: user("conformance:thought_round_trip") })
    expect(first.content).toEqual([
      { type: "thought", text: "thinking", signature: "sig-conformance", provider_type: "aws_bedrock" },
      { type: "text", text: "first" }
    ])
    expect(fake.requests[0].body.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 1024 }, top_k: 5 })
    expect(fake.requests[0].body.inferenceConfig).toEqual({ maxTokens: 2048, temperature: 1 })
    const second = await infer({
      function_name: "thinking",
      input: {
        messages: [
          { role: "user", content: "conformance:thought_round_trip" },
          { role: "assistant", content: first.content },
          { role: "user", content: "conformance:thought_round_trip_2" }
        ]
      }
    })
    expect(second.content).toEqual([{ type: "text", text: "second" }])
    expect(fake.requests[1].body.messages[1].content[0]).toEqual({
      reasoningContent: { reasoningText: { text: "thinking", signature: "sig-conformance" } }
    })
    const { events } = await gateway.stream("/inference", { function_name: "thinking", input: user("conformance:thought_round_trip"), stream: true })
    const parts = deltas(events)
    expect(joined(parts, "thought")).toBe("thinking")
    expect(parts.find((part) => part.type === "thought" && part.signature !== undefined)?.signature).toBe("sig-conformance")
    expect(joined(parts, "text")).toBe("first")
  })

  it("keeps redacted reasoning as an unknown block and sends it back to the same provider", async () => {
    fake.script.push({ blocks: [{ redacted: "b3BhcXVl" }, { text: "ok" }], stopReason: "end_turn" })
    const first = await infer({ function_name: "thinking", input: user("hi") })
    expect(first.content[0]).toEqual({
      type: "unknown",
      data: { reasoningContent: { redactedContent: "b3BhcXVl" } },
      model_provider_name: "gateway::model_name::bedrock::provider_name::b"
    })
    await infer({
      function_name: "thinking",
      input: { messages: [{ role: "user", content: "hi" }, { role: "assistant", content: first.content }, { role: "user", content: "more" }] }
    })
    expect(fake.requests[1].body.messages[1].content).toEqual([{ reasoningContent: { redactedContent: "b3BhcXVl" } }, { text: "ok" }])
  })

  it("reports usage with cache reads as cached input tokens", async () => {
    const body = await infer({ function_name: "chat", input: user("conformance:usage") })
    expect(body.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 })
  })

  it("takes a Bedrock API key as a bearer token", async () => {
    const body = await infer({ model_name: "bedrock_key", input: user("hi") })
    expect(body.content).toEqual([{ type: "text", text: "Hello from fake Bedrock" }])
    expect(fake.requests[0].auth).toBe("bearer")
    expect(fake.requests[0].headers.authorization).toBe(`Bearer ${fakeAwsIdentity.bearerToken}`)
  })

  it("fails with Bedrock's message when the API key is refused, without echoing it", async () => {
    const response = await gateway.post("/inference", { model_name: "bedrock_wrong_key", input: user("hi") })
    expect(response.status).toBe(502)
    expect(JSON.stringify(response.body)).not.toContain("ABSKnotTheRightKey")
    expect(fake.requests).toHaveLength(0)
  })

  it("passes Bedrock's own error message on", async () => {
    const response = await gateway.post("/inference", { function_name: "chat", input: user("conformance:error") })
    expect(response.status).toBe(400)
    expect(JSON.stringify(response.body)).toContain("conformance: prompt is too long")
  })

  it("ends a stream that carries an exception with its message", async () => {
    fake.script.push({ blocks: [{ text: "partial answer" }], exception: { type: "throttlingException", message: "Too many tokens, please wait" } })
    const { raw } = await gateway.stream("/inference", { function_name: "chat", input: user("hi"), stream: true })
    expect(raw).toContain("Too many tokens, please wait")
  })

  it("answers through a SageMaker endpoint's OpenAI container, whole and streamed", async () => {
    const body = await infer({ model_name: "sagemaker", input: user("hi") })
    expect(body.content).toEqual([{ type: "text", text: "Hello from fake SageMaker" }])
    const request = fake.requests[0]
    expect(request.path).toBe("/endpoints/my-endpoint/invocations")
    expect(request.headers.authorization).toMatch(/\/us-east-1\/sagemaker\/aws4_request/)
    expect(request.body).toMatchObject({ model: "container-model", messages: [{ role: "user", content: "hi" }] })
    const { status, events } = await gateway.stream("/inference", { model_name: "sagemaker", input: user("conformance:stream"), stream: true })
    expect(status).toBe(200)
    expect(fake.requests[1].path).toBe("/endpoints/my-endpoint/invocations-response-stream")
    expect(fake.requests[1].body).toMatchObject({ stream: true, stream_options: { include_usage: true } })
    expect(joined(deltas(events), "text")).toBe("conformance text")
  })

  it("answers tool calls through SageMaker, streamed", async () => {
    const { events } = await gateway.stream("/inference", {
      model_name: "sagemaker",
      input: user("conformance:tool_call"),
      additional_tools: [{ name: "get_weather", description: "weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
      stream: true
    })
    const calls = deltas(events).filter((part) => part.type === "tool_call")
    expect(calls.map((call) => call.raw_arguments).join("")).toBe(`{"city":"Paris"}`)
    expect(calls[0]).toMatchObject({ id: "call_1", raw_name: "get_weather" })
  })

  it("passes the container's error message on from SageMaker's ModelError", async () => {
    const response = await gateway.post("/inference", { model_name: "sagemaker", input: user("conformance:error") })
    expect(response.status).toBe(400)
    expect(JSON.stringify(response.body)).toContain("conformance: prompt is too long")
  })
})

describe("AWS credentials: session tokens and wrong secrets", () => {
  const identity = { ...fakeAwsIdentity, secretAccessKey: "another/secret+for-temporary-keys", sessionToken: "FQoGZXIvYXdzEFAKE//token+value" }
  let temporary: FakeAws
  let permanent: FakeAws
  let gateway: RunningGateway

  beforeAll(async () => {
    temporary = await startFakeBedrock(identity)
    permanent = await startFakeBedrock()
    gateway = await startGateway({
      config: `
[models.temporary]
routing = ["b"]
[models.temporary.providers.b]
type = "aws_bedrock"
model_id = "anthropic.claude-3-haiku-20240307-v1:0"
endpoint_url = "${temporary.url}"

[models.permanent]
routing = ["b"]
[models.permanent.providers.b]
type = "aws_bedrock"
model_id = "anthropic.claude-3-haiku-20240307-v1:0"
region = "us-east-1"
endpoint_url = "${permanent.url}"

[models.sagemaker]
routing = ["s"]
[models.sagemaker.providers.s]
type = "aws_sagemaker"
endpoint_name = "tgi-endpoint"
hosted_provider = "tgi"
region = "us-east-1"
endpoint_url = "${temporary.url}"
`,
      env: {
        AWS_ACCESS_KEY_ID: identity.accessKeyId,
        AWS_SECRET_ACCESS_KEY: identity.secretAccessKey,
        AWS_SESSION_TOKEN: identity.sessionToken,
        AWS_BEARER_TOKEN_BEDROCK: undefined,
        AWS_REGION: undefined,
        AWS_DEFAULT_REGION: "us-east-1"
      }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await temporary?.close()
    await permanent?.close()
  })

  it("signs with a session token (x-amz-security-token, signed), the region from AWS_DEFAULT_REGION", async () => {
    const response = await gateway.post("/inference", { model_name: "temporary", input: user("hi") })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(response.body.content).toEqual([{ type: "text", text: "Hello from fake Bedrock" }])
    const request = temporary.requests.at(-1)!
    expect(request.headers["x-amz-security-token"]).toBe(identity.sessionToken)
    expect(request.headers.authorization).toMatch(/SignedHeaders=[^,]*x-amz-security-token/)
  })

  it("signs SageMaker calls with a session token too (a TGI container, without stream_options)", async () => {
    const { status, events } = await gateway.stream("/inference", { model_name: "sagemaker", input: user("conformance:stream"), stream: true })
    expect(status).toBe(200)
    expect(joined(deltas(events), "text")).toBe("conformance text")
    expect(temporary.requests.at(-1)!.body.stream_options).toBeUndefined()
  })

  it("fails when the secret is not the one AWS knows: the signature does not match", async () => {
    const response = await gateway.post("/inference", { model_name: "permanent", input: user("hi") })
    expect(response.status).toBe(502)
    expect(JSON.stringify(response.body)).toMatch(/signature we calculated does not match|credentials refused/)
    expect(JSON.stringify(response.body)).not.toContain(identity.secretAccessKey)
    expect(permanent.requests).toHaveLength(0)
  })
})

describe("AWS_BEARER_TOKEN_BEDROCK in the credential chain", () => {
  let fake: FakeAws
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeBedrock()
    gateway = await startGateway({
      config: `
[models.bedrock]
routing = ["b"]
[models.bedrock.providers.b]
type = "aws_bedrock"
model_id = "amazon.nova-micro-v1:0"
endpoint_url = "${fake.url}"

[models.sagemaker]
routing = ["s"]
[models.sagemaker.providers.s]
type = "aws_sagemaker"
endpoint_name = "e"
hosted_provider = "openai"
endpoint_url = "${fake.url}"
`,
      env: {
        AWS_BEARER_TOKEN_BEDROCK: fakeAwsIdentity.bearerToken,
        AWS_ACCESS_KEY_ID: undefined,
        AWS_SECRET_ACCESS_KEY: undefined,
        AWS_SESSION_TOKEN: undefined,
        AWS_REGION: "us-east-1"
      }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })

  it("sends the Bedrock API key of the default credential (sdk) as a bearer token", async () => {
    const response = await gateway.post("/inference", { model_name: "bedrock", input: user("hi") })
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${fakeAwsIdentity.bearerToken}`)
  })

  it("refuses to send it to SageMaker, which takes signed calls only", async () => {
    const before = fake.requests.length
    const response = await gateway.post("/inference", { model_name: "sagemaker", input: user("hi") })
    expect(response.status).toBe(502)
    expect(JSON.stringify(response.body)).toContain("the aws_sagemaker provider signs its calls with AWS access keys (SigV4) and does not take a bearer token")
    expect(JSON.stringify(response.body)).not.toContain(fakeAwsIdentity.bearerToken)
    expect(fake.requests.length).toBe(before)
  })
})
