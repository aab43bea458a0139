/**
 * What the Bedrock and SageMaker codecs refuse or decide beyond the recorded fixtures: files
 * Converse cannot take, arguments that are not JSON, a missing region, the region from the
 * start-up environment, endpoints and model ids in URLs.
 */
import { describe, expect, it } from "vitest"
import type { ModelRequest, RequestBlock } from "../../src/inference/types.ts"
import { bedrockCodec } from "../../src/providers/aws/bedrock.ts"
import { sageMakerCodec } from "../../src/providers/aws/sagemaker.ts"
import { WireProblem } from "../../src/providers/codec.ts"

const qualifiedName = "gateway::model_name::m::provider_name::p"
const request = (content: ReadonlyArray<RequestBlock>, role: "user" | "assistant" = "user"): ModelRequest => ({
  // an assistant turn follows a user's (Converse starts with the user)
  messages: role === "user" ? [{ role, content }] : [{ role: "user", content: [{ type: "text", text: "hi" }] }, { role, content }],
  params: {},
  functionType: "chat",
  jsonMode: "off",
  providerTools: []
})
const bedrockTarget = bedrockCodec.target({ model_id: "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3-3-70b-instruct-v1:0", region: "us-east-1" }, "", {})
const bedrockBody = (r: ModelRequest, target = bedrockTarget) => bedrockCodec.body(r, { target, stream: false, qualifiedName, providerTools: [] })
const problem = (value: unknown) => value instanceof WireProblem ? value.message : `not a problem: ${JSON.stringify(value)}`

describe("aws_bedrock requests", () => {
  it("puts an ARN model id in one path segment", () => {
    expect(bedrockCodec.url(bedrockTarget, true)).toBe(
      "https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.meta.llama3-3-70b-instruct-v1%3A0/converse-stream"
    )
  })

  it("takes the region from AWS_REGION, then AWS_DEFAULT_REGION, and endpoint_url over both", () => {
    expect(bedrockCodec.target({ model_id: "m" }, "", { AWS_REGION: "eu-west-3", AWS_DEFAULT_REGION: "us-west-2" }).endpoint).toBe(
      "https://bedrock-runtime.eu-west-3.amazonaws.com"
    )
    expect(bedrockCodec.target({ model_id: "m" }, "", { AWS_DEFAULT_REGION: "us-west-2" }).region).toBe("us-west-2")
    expect(bedrockCodec.target({ model_id: "m", endpoint_url: "http://127.0.0.1:9/" }, "", { AWS_REGION: "eu-west-3" }).endpoint).toBe("http://127.0.0.1:9")
  })

  it("fails a call without a region or an endpoint, saying how to give one", () => {
    const target = bedrockCodec.target({ model_id: "m" }, "", {})
    expect(problem(bedrockBody(request([{ type: "text", text: "x" }]), target))).toBe(
      "the aws_bedrock provider has no region: set region in its table, or AWS_REGION (or give endpoint_url)"
    )
  })

  it("refuses files by URL and of types Converse does not take", () => {
    expect(problem(bedrockBody(request([{ type: "file", source: { kind: "url", url: "https://example.com/a.png", mimeType: "image/png" } }])))).toContain(
      "the aws_bedrock provider takes files as base64 data, not as a URL"
    )
    expect(problem(bedrockBody(request([{ type: "file", source: { kind: "base64", data: "AAAA", mimeType: "audio/wav" } }])))).toContain(
      "the aws_bedrock provider does not take files of type audio/wav"
    )
  })

  it("says a failed tool's result failed (status error), and says nothing of one that did not", () => {
    const body = bedrockBody(request([
      { type: "tool_result", id: "t1", name: "f", result: "no such city", is_error: true },
      { type: "tool_result", id: "t2", name: "f", result: "sunny" }
    ])) as any
    expect(body.messages[0].content).toEqual([
      { toolResult: { toolUseId: "t1", content: [{ text: "no such city" }], status: "error" } },
      { toolResult: { toolUseId: "t2", content: [{ text: "sunny" }] } }
    ])
  })

  it("refuses tool call arguments that are not JSON (Converse sends them as a JSON document)", () => {
    expect(problem(bedrockBody(request([{ type: "tool_call", id: "t1", name: "f", arguments: "{not json" }], "assistant")))).toContain(
      `the arguments of tool call "t1" are not JSON`
    )
  })

  it("leaves out unknown blocks meant for another provider, and thoughts without text", () => {
    const body = bedrockBody(request([
      { type: "text", text: "a" },
      { type: "unknown", data: { x: 1 }, modelProviderName: "gateway::model_name::m::provider_name::other" },
      { type: "thought", signature: "only-a-signature" }
    ], "assistant")) as any
    expect(body.messages[1]).toEqual({ role: "assistant", content: [{ text: "a" }] })
  })

  it("takes json_mode on without a schema as a plain JSON instruction", () => {
    const body = bedrockBody({ ...request([]), functionType: "json", jsonMode: "on" }) as any
    expect(body.system).toEqual([{ text: "Respond with a JSON object only, without any other text." }])
  })
})

describe("aws_sagemaker requests", () => {
  const target = sageMakerCodec.target({ endpoint_name: "my endpoint", hosted_provider: "tgi", region: "ap-south-1" }, "", {})

  it("invokes the endpoint by name, in its region", () => {
    expect(sageMakerCodec.url(target, false)).toBe("https://runtime.sagemaker.ap-south-1.amazonaws.com/endpoints/my%20endpoint/invocations")
    expect(sageMakerCodec.url(target, true)).toBe(
      "https://runtime.sagemaker.ap-south-1.amazonaws.com/endpoints/my%20endpoint/invocations-response-stream"
    )
  })

  it("fails a call without a region, naming the provider type", () => {
    const noRegion = sageMakerCodec.target({ endpoint_name: "e", hosted_provider: "openai" }, "", {})
    expect(problem(sageMakerCodec.body(request([]), { target: noRegion, stream: false, qualifiedName, providerTools: [] }))).toContain(
      "the aws_sagemaker provider has no region"
    )
  })
})
