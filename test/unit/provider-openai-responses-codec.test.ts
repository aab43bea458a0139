/**
 * The `openai` provider type choosing its API once per configured provider (`api_type`, the
 * `openai::responses::<model>` short-hand), the Responses API's unknown blocks scoped to the
 * provider that answered them, and the reasoning signature's form.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { ProviderConfig } from "../../src/config/types.ts"
import { openAiProvider } from "../../src/providers/openai/index.ts"
import { encryptedContentOf } from "../../src/providers/openai/responses/signature.ts"
import { parseShorthandModel } from "../../src/providers/registry.ts"
import { type ProviderCall, qualifiedProviderName } from "../../src/providers/types.ts"
import { type HttpCall, HttpTransport } from "../../src/transport.ts"
import { byteReaderOf } from "../support/providerStreams.ts"
import { hiRequest } from "../support/modelRequests.ts"

const request = hiRequest

const call: ProviderCall = {
  request,
  apiKey: "sk-1",
  extraBody: [],
  extraHeaders: [],
  modelName: "m",
  providerName: "p",
  qualifiedName: qualifiedProviderName("m", "p")
}

const config = (modelName: string, settings: Record<string, unknown>): ProviderConfig => ({
  name: "p",
  type: "openai",
  modelName,
  credential: { kind: "static", value: "sk-1" },
  extraBody: [],
  extraHeaders: [],
  timeouts: {},
  settings
})

/** what one call of a provider made of `config` sends, answered with `text` */
const sentBy = async (provider: ProviderConfig, text: string) => {
  const sent: Array<HttpCall> = []
  const transport = HttpTransport.of({
    post: (request) => {
      sent.push(request)
      return Effect.succeed({ status: 200, text })
    },
    postStream: () => Effect.succeed({ ok: true as const, status: 200, body: byteReaderOf([]) }),
    download: () => Effect.die("not used")
  })
  const response = await Effect.runPromise(Effect.provideService(openAiProvider.make(provider).infer(call), HttpTransport, transport))
  return { sent: sent[0], body: JSON.parse(sent[0].body), response }
}

const responsesAnswer = JSON.stringify({
  status: "completed",
  output: [
    { type: "web_search_call", id: "ws_1", status: "completed" },
    { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi" }] }
  ],
  usage: { input_tokens: 3, output_tokens: 1 }
})
const chatAnswer = JSON.stringify({ choices: [{ message: { content: "Hi" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1 } })

describe("the openai provider type chooses its API per configured provider", () => {
  it("Chat Completions by default", async () => {
    const { sent, body } = await sentBy(config("gpt-4o", { api_base: "http://fake/v1" }), chatAnswer)
    expect(sent.url).toBe("http://fake/v1/chat/completions")
    expect(body.model).toBe("gpt-4o")
    expect(body.messages).toEqual([{ role: "user", content: "Hi" }])
  })

  it("the Responses API with api_type = \"responses\", its unknown blocks scoped to the provider", async () => {
    const { sent, body, response } = await sentBy(config("gpt-5", { api_base: "http://fake/v1/", api_type: "responses" }), responsesAnswer)
    expect(sent.url).toBe("http://fake/v1/responses")
    expect(sent.headers.authorization).toBe("Bearer sk-1")
    expect(body).toEqual({ model: "gpt-5", input: [{ role: "user", content: [{ type: "input_text", text: "Hi" }] }], store: false })
    expect(response.output).toEqual([
      { type: "unknown", data: { type: "web_search_call", id: "ws_1", status: "completed" }, model_provider_name: call.qualifiedName },
      { type: "text", text: "Hi" }
    ])
  })

  it("the Responses API for the short-hand openai::responses::<model>, at OpenAI's address", async () => {
    const shorthand = parseShorthandModel("openai::responses::gpt-5-mini")
    expect(shorthand).toEqual({ type: "openai", model: "responses::gpt-5-mini" })
    const { sent, body } = await sentBy(config(shorthand!.model, {}), responsesAnswer)
    expect(sent.url).toBe("https://api.openai.com/v1/responses")
    expect(body.model).toBe("gpt-5-mini")
  })

  it("chat_completions said explicitly keeps a model name that starts with responses::", async () => {
    const { sent, body } = await sentBy(config("responses::x", { api_type: "chat_completions" }), chatAnswer)
    expect(sent.url).toBe("https://api.openai.com/v1/chat/completions")
    expect(body.model).toBe("responses::x")
  })

  it("takes api_type and include_encrypted_reasoning as settings of its table", () => {
    expect(Object.keys(openAiProvider.settingsFields).sort()).toEqual(["api_base", "api_type", "include_encrypted_reasoning"])
  })
})

describe("reasoning signatures", () => {
  it("are the encrypted content itself; the gateway's earlier JSON form is read; another provider's is not ours", () => {
    expect(encryptedContentOf("gAAAAABor0Aw-encrypted")).toBe("gAAAAABor0Aw-encrypted")
    expect(encryptedContentOf("{\"id\":\"rs_1\",\"encrypted_content\":\"gAAAAB-enc\"}")).toBe("gAAAAB-enc")
    expect(encryptedContentOf("EqQBCkYIBxgC")).toBeUndefined()
    expect(encryptedContentOf("{\"id\":\"rs_1\"}")).toBeUndefined()
    expect(encryptedContentOf("{not json")).toBeUndefined()
    expect(encryptedContentOf(undefined)).toBeUndefined()
  })
})
