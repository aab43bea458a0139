/**
 * The members of the Chat Completions family (src/providers/chatCompletionsMembers.ts): where
 * each sends its calls, its key, the parameters it renames or refuses, how it asks for json_mode
 * strict, and which types have a `<type>::<model>` short-hand.
 */
import { describe, expect, it } from "vitest"
import { InvalidRequest } from "../../src/errors.ts"
import type { ModelRequest } from "../../src/inference/types.ts"
import type { InferenceParams } from "../../src/inference/params.ts"
import {
  deepSeekCodec,
  fireworksCodec,
  groqCodec,
  hyperbolicCodec,
  openRouterCodec,
  sglangCodec,
  tgiCodec,
  togetherCodec,
  vllmCodec,
  xaiCodec
} from "../../src/providers/chatCompletionsMembers.ts"
import type { WireCodec } from "../../src/providers/codec.ts"
import { openAiCodec } from "../../src/providers/openai/index.ts"
import { parseShorthandModel, providerTypes } from "../../src/providers/registry.ts"
import { wireRequest } from "../../src/providers/wireRequest.ts"
import { qualifiedProviderName } from "../../src/providers/types.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"

/** a member's codec (openai's target adds the address of its Batch API to the family's) */
type FamilyCodec = WireCodec<any, any, string>

const outputSchema = { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }

const allParams: InferenceParams = {
  temperature: 0.5,
  max_tokens: 100,
  seed: 42,
  top_p: 0.9,
  top_k: 40,
  presence_penalty: 0.1,
  frequency_penalty: 0.2,
  stop_sequences: ["END"],
  reasoning_effort: "low",
  service_tier: "flex",
  thinking_budget_tokens: 1000,
  verbosity: "low"
}

const someApiBase = { api_base: "http://10.0.0.5:8000/v1" }

/** The HTTP request a member makes (settings `settings`, model "m", key `apiKey`) for `request`. */
const sent = (
  codec: FamilyCodec,
  request: Partial<ModelRequest>,
  { settings = someApiBase, apiKey = "k" }: { settings?: object; apiKey?: string | null } = {}
) => {
  const built = wireRequest(codec, codec.target(settings, "m"), {
    request: { messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], params: {}, functionType: "chat", jsonMode: "off", providerTools: [], ...request },
    apiKey: apiKey ?? undefined,
    extraBody: [],
    extraHeaders: [],
    modelName: "model",
    providerName: "p",
    qualifiedName: qualifiedProviderName("model", "p")
  }, false)
  if (built instanceof ProviderFailure || built instanceof InvalidRequest) throw new Error(built.message)
  return { url: built.url, headers: built.headers, body: JSON.parse(built.body) }
}

const hosted: ReadonlyArray<readonly [FamilyCodec, string]> = [
  [openAiCodec, "https://api.openai.com/v1/chat/completions"],
  [deepSeekCodec, "https://api.deepseek.com/chat/completions"],
  [fireworksCodec, "https://api.fireworks.ai/inference/v1/chat/completions"],
  [groqCodec, "https://api.groq.com/openai/v1/chat/completions"],
  [hyperbolicCodec, "https://api.hyperbolic.xyz/v1/chat/completions"],
  [openRouterCodec, "https://openrouter.ai/api/v1/chat/completions"],
  [togetherCodec, "https://api.together.xyz/v1/chat/completions"],
  [xaiCodec, "https://api.x.ai/v1/chat/completions"]
]

describe("Chat Completions family members", () => {
  it.each(hosted)("%s is served at its provider's address, with the key as a bearer token", (codec, url) => {
    const { url: sentTo, headers } = sent(codec, {}, { settings: {} })
    expect(sentTo).toBe(url)
    expect(headers.authorization).toBe("Bearer k")
  })

  it.each([sglangCodec, vllmCodec, tgiCodec].map((codec) => [codec.type, codec] as const))(
    "%s is served at its api_base, and sends no authorization without a key (api_key_location = \"none\")",
    (_type, codec) => {
      const { url, headers } = sent(codec, {}, { apiKey: null })
      expect(url).toBe("http://10.0.0.5:8000/v1/chat/completions")
      expect(headers).not.toHaveProperty("authorization")
    }
  )

  it.each([
    [openAiCodec, { max_completion_tokens: 100, seed: 42, reasoning_effort: "low", service_tier: "flex", verbosity: "low" }],
    [deepSeekCodec, { max_tokens: 100 }],
    [fireworksCodec, { max_tokens: 100, seed: 42, top_k: 40, reasoning_effort: "low" }],
    [groqCodec, { max_completion_tokens: 100, seed: 42, reasoning_effort: "low", service_tier: "flex" }],
    [hyperbolicCodec, { max_tokens: 100, seed: 42, top_k: 40 }],
    [openRouterCodec, { max_tokens: 100, seed: 42, top_k: 40, reasoning_effort: "low", verbosity: "low" }],
    [togetherCodec, { max_tokens: 100, seed: 42, top_k: 40, reasoning_effort: "low" }],
    [xaiCodec, { max_tokens: 100, seed: 42, reasoning_effort: "low" }],
    [sglangCodec, { max_tokens: 100, seed: 42, top_k: 40, reasoning_effort: "low" }],
    [vllmCodec, { max_tokens: 100, seed: 42, top_k: 40, reasoning_effort: "low" }],
    [tgiCodec, { max_tokens: 100, seed: 42 }]
  ] as const)("%s sends the parameters it takes under its names, and leaves out the others", (codec, expected) => {
    const { body } = sent(codec as FamilyCodec, { params: allParams })
    const optional = ["max_tokens", "max_completion_tokens", "seed", "top_k", "reasoning_effort", "service_tier", "verbosity"]
    const sentOptional = Object.fromEntries(optional.filter((name) => name in body).map((name) => [name, body[name]]))
    expect(sentOptional).toEqual(expected)
    // the sampling parameters every member takes
    expect(body).toMatchObject({ temperature: 0.5, top_p: 0.9, presence_penalty: 0.1, frequency_penalty: 0.2, stop: ["END"] })
    expect(body).not.toHaveProperty("thinking_budget_tokens")
  })

  it.each([
    [openAiCodec, { type: "json_schema", json_schema: { name: "response", strict: true, schema: outputSchema } }],
    [groqCodec, { type: "json_schema", json_schema: { name: "response", strict: true, schema: outputSchema } }],
    [vllmCodec, { type: "json_schema", json_schema: { name: "response", strict: true, schema: outputSchema } }],
    // no native structured output: JSON mode, the gateway checks the schema on the answer
    [deepSeekCodec, { type: "json_object" }],
    [hyperbolicCodec, { type: "json_object" }],
    // TGI's own grammar
    [tgiCodec, { type: "json", value: outputSchema }]
  ] as const)("%s asks for json_mode strict as %j", (codec, format) => {
    const { body } = sent(codec as FamilyCodec, { functionType: "json", jsonMode: "strict", outputSchema })
    expect(body.response_format).toEqual(format)
  })

  it("names the member when it refuses a request it cannot express (a PDF by URL)", () => {
    const built = wireRequest(deepSeekCodec, deepSeekCodec.target({}, "m"), {
      request: {
        messages: [{ role: "user", content: [{ type: "file", source: { kind: "url", url: "https://example.com/a.pdf", mimeType: "application/pdf" } }] }],
        params: {},
        functionType: "chat",
        jsonMode: "off",
        providerTools: []
      },
      apiKey: "k",
      extraBody: [],
      extraHeaders: [],
      modelName: "model",
      providerName: "p",
      qualifiedName: qualifiedProviderName("model", "p")
    }, false)
    expect(built).toBeInstanceOf(ProviderFailure)
    expect((built as ProviderFailure).message).toBe(
      "the deepseek provider takes files other than images as base64 data, not as a URL (application/pdf)"
    )
  })

  it("asks TGI for json_mode on with its grammar of any object", () => {
    const { body } = sent(tgiCodec, { functionType: "json", jsonMode: "on", outputSchema })
    expect(body.response_format).toEqual({ type: "json", value: { type: "object" } })
  })

  it("registers every member, with the default credential of its type", () => {
    const defaults = Object.fromEntries(
      ["deepseek", "fireworks", "groq", "hyperbolic", "openrouter", "together", "xai", "sglang", "vllm", "tgi"].map((type) => [
        type,
        providerTypes.get(type)?.defaultCredential
      ])
    )
    expect(defaults).toEqual({
      deepseek: { kind: "env", name: "DEEPSEEK_API_KEY" },
      fireworks: { kind: "env", name: "FIREWORKS_API_KEY" },
      groq: { kind: "env", name: "GROQ_API_KEY" },
      hyperbolic: { kind: "env", name: "HYPERBOLIC_API_KEY" },
      openrouter: { kind: "env", name: "OPENROUTER_API_KEY" },
      together: { kind: "env", name: "TOGETHER_API_KEY" },
      xai: { kind: "env", name: "XAI_API_KEY" },
      sglang: { kind: "env", name: "SGLANG_API_KEY" },
      vllm: { kind: "env", name: "VLLM_API_KEY" },
      tgi: { kind: "env", name: "TGI_API_KEY" }
    })
  })

  it("has short-hands for the hosted members, not for the self-hosted servers (whose api_base only a table gives)", () => {
    expect(parseShorthandModel("deepseek::deepseek-chat")).toEqual({ type: "deepseek", model: "deepseek-chat" })
    expect(parseShorthandModel("fireworks::accounts/fireworks/models/llama-v3p1-8b-instruct")).toEqual({
      type: "fireworks",
      model: "accounts/fireworks/models/llama-v3p1-8b-instruct"
    })
    for (const type of ["groq", "hyperbolic", "openrouter", "together", "xai"]) {
      expect(parseShorthandModel(`${type}::m`)).toEqual({ type, model: "m" })
    }
    for (const type of ["sglang", "vllm", "tgi"]) expect(parseShorthandModel(`${type}::m`)).toBeUndefined()
  })
})
