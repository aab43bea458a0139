/** The mistral codec beyond its fixtures: tool call ids, what it refuses, streamed errors. */
import { describe, expect, it } from "vitest"
import type { ModelRequest } from "../../src/inference/types.ts"
import { WireProblem } from "../../src/providers/codec.ts"
import { mistralCodec } from "../../src/providers/mistral/index.ts"
import { mistralToolCallId } from "../../src/providers/mistral/request.ts"
import { mistralErrorMessage } from "../../src/providers/mistral/response.ts"
import { parseShorthandModel } from "../../src/providers/registry.ts"
import { qualifiedProviderName } from "../../src/providers/types.ts"

const target = mistralCodec.target({}, "mistral-large-latest")
const bodyOf = (request: Partial<ModelRequest>) =>
  mistralCodec.body(
    { messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }], params: {}, functionType: "chat", jsonMode: "off", providerTools: [], ...request },
    { target, stream: false, qualifiedName: qualifiedProviderName("m", "p"), providerTools: [] }
  )

describe("mistral", () => {
  it("keeps its own tool call ids and maps others to nine letters and digits, the same each time", () => {
    expect(mistralToolCallId("D681PevKs")).toBe("D681PevKs")
    for (const id of ["call_1", "toolu_01A09q90qw90lq917835lq9", "", "a-b", "123456789012"]) {
      expect(mistralToolCallId(id)).toMatch(/^[a-zA-Z0-9]{9}$/)
      expect(mistralToolCallId(id)).toBe(mistralToolCallId(id))
    }
    const many = new Set(Array.from({ length: 1000 }, (_, i) => mistralToolCallId(`call_${i}`)))
    expect(many.size).toBe(1000)
  })

  it("refuses custom tools and files other than images and PDFs, naming the provider", () => {
    const custom = bodyOf({
      tools: {
        tools: [{ name: "grammar", description: "", parameters: {}, strict: false, validator: undefined as never, custom: {} }],
        choice: { type: "auto" }
      }
    })
    expect(custom).toBeInstanceOf(WireProblem)
    expect((custom as WireProblem).message).toBe("the mistral provider does not support custom (free-text) tools")
    const audio = bodyOf({
      messages: [{ role: "user", content: [{ type: "file", source: { kind: "base64", data: "AAAA", mimeType: "audio/wav" } }] }]
    })
    expect((audio as WireProblem).message).toBe("the mistral provider takes images and PDFs, not files of type audio/wav")
  })

  it("has the short-hand mistral::<model> and the default address", () => {
    expect(parseShorthandModel("mistral::mistral-small-latest")).toEqual({ type: "mistral", model: "mistral-small-latest" })
    expect(mistralCodec.url(target, false)).toBe("https://api.mistral.ai/v1/chat/completions")
    expect(mistralCodec.defaultCredential).toEqual({ kind: "env", name: "MISTRAL_API_KEY" })
  })

  it("reads its error bodies, and fails a stream on an error event", () => {
    expect(mistralErrorMessage(JSON.stringify({ object: "error", message: "bad", type: "x" }))).toBe("bad")
    expect(mistralErrorMessage(JSON.stringify({ message: { detail: "nested" } }))).toBe("{\"detail\":\"nested\"}")
    expect(mistralErrorMessage("not json")).toBeUndefined()
    const parse = mistralCodec.streamParser()
    const problem = parse(JSON.stringify({ object: "error", message: "Service unavailable" }))
    expect(problem).toEqual(new WireProblem("the mistral provider streamed an error: Service unavailable"))
  })
})
