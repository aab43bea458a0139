/**
 * Provider families (issue 37): which API a provider speaks, whose thought signatures it can
 * read, how a signature another family made travels through a surface's client (wrapped with
 * its maker's type), and what a call leaves out of a request for a provider of another family.
 */
import { describe, expect, it } from "vitest"
import type { ModelRequest, RequestBlock } from "../../src/inference/types.ts"
import {
  providerFamily,
  requestForProvider,
  signatureFamilyOf,
  signatureForClient,
  signatureFromClient
} from "../../src/providers/families.ts"

const provider = (type: string, settings: Record<string, unknown> = {}, modelName = "m") => ({ type, modelName, settings })

describe("provider families", () => {
  it("knows Anthropic's API and OpenAI's Responses API by type and settings", () => {
    expect(providerFamily(provider("anthropic"))).toBe("anthropic")
    expect(providerFamily(provider("gcp_vertex_anthropic"))).toBe("anthropic")
    expect(providerFamily(provider("openai", { api_type: "responses" }))).toBe("openai_responses")
    expect(providerFamily(provider("openai", {}, "responses::gpt-5"))).toBe("openai_responses")
    expect(providerFamily(provider("openai", { api_type: "chat_completions" }, "responses::gpt-5"))).toBe("other")
    expect(providerFamily(provider("openai"))).toBe("other")
    expect(providerFamily(provider("aws_bedrock"))).toBe("other")
  })

  it("groups the types whose signatures read each other", () => {
    expect(signatureFamilyOf("gcp_vertex_anthropic")).toBe(signatureFamilyOf("anthropic"))
    expect(signatureFamilyOf("gcp_vertex_gemini")).toBe(signatureFamilyOf("google_ai_studio_gemini"))
    expect(signatureFamilyOf("aws_bedrock")).not.toBe(signatureFamilyOf("anthropic"))
    expect(signatureFamilyOf("openai")).not.toBe(signatureFamilyOf("anthropic"))
  })

  it("hands a client its own family's signatures as they are, another's wrapped, and reads both back", () => {
    expect(signatureForClient("EqQB", "gcp_vertex_anthropic", "anthropic")).toBe("EqQB")
    expect(signatureForClient("EqQB", undefined, "anthropic")).toBe("EqQB")
    const wrapped = signatureForClient("CiQB/x+=", "google_ai_studio_gemini", "anthropic")
    expect(wrapped).toBe("gateway.v1.google_ai_studio_gemini.CiQB/x+=")
    expect(signatureFromClient(wrapped, "anthropic")).toEqual({ providerType: "google_ai_studio_gemini", signature: "CiQB/x+=" })
    expect(signatureFromClient("EqQB", "anthropic")).toEqual({ providerType: "anthropic", signature: "EqQB" })
    // a Fernet token (OpenAI's encrypted reasoning) keeps its dots when wrapped
    expect(signatureFromClient(signatureForClient("gAAAA.b.c", "openai", "anthropic"), "anthropic")).toEqual({ providerType: "openai", signature: "gAAAA.b.c" })
  })
})

describe("requestForProvider", () => {
  const request = (content: ReadonlyArray<RequestBlock>): ModelRequest => ({
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }, { role: "assistant", content }],
    params: {},
    functionType: "chat",
    jsonMode: "off",
    providerTools: []
  })
  const redacted: RequestBlock = { type: "unknown", data: { type: "redacted_thinking", data: "x" }, providerType: "anthropic" }
  const claudeThought: RequestBlock = { type: "thought", text: "c", signature: "EqQB", providerType: "anthropic" }
  const geminiThought: RequestBlock = { type: "thought", text: "g", signature: "CiQB", providerType: "google_ai_studio_gemini" }
  const legacy: RequestBlock = { type: "thought", text: "l", signature: "old" }

  it("leaves out another family's signatures and blocks, keeping the thought's text", () => {
    const mixed = request([claudeThought, geminiThought, redacted, legacy, { type: "text", text: "a" }])
    expect(requestForProvider(mixed, "gcp_vertex_anthropic").messages[1].content).toEqual([
      claudeThought,
      { type: "thought", text: "g", providerType: "google_ai_studio_gemini" },
      redacted,
      legacy,
      { type: "text", text: "a" }
    ])
    expect(requestForProvider(mixed, "gcp_vertex_gemini").messages[1].content).toEqual([
      { type: "thought", text: "c", providerType: "anthropic" },
      geminiThought,
      legacy,
      { type: "text", text: "a" }
    ])
  })

  it("is the request itself when nothing is foreign", () => {
    const own = request([claudeThought, redacted, legacy])
    expect(requestForProvider(own, "anthropic")).toBe(own)
  })
})
