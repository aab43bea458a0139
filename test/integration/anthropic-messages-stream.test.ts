/**
 * Streamed answers of the Anthropic Messages surface (issue 37, design 2.3) driven by the
 * official `@anthropic-ai/sdk` (`messages.stream()`, `finalMessage()`, its `text` events) and
 * read byte for byte with `fetch`: onto the dummy provider and a fake Anthropic server
 * (thinking with its signature, tool use, a tool-use loop), the pings of a stream whose provider
 * is slow to start or pauses (`stream_keepalive_ms`), failures before and after the answer is
 * committed, and a client hanging up.
 */
import Anthropic from "@anthropic-ai/sdk"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { dummyHelloText, dummyStreamedPieces } from "../../src/providers/dummy/fixed.ts"
import { anthropicSurfaceConfig, startAnthropicSurface, toolResultTurn, weatherTool } from "../support/anthropicSurface.ts"
import { type FakeAnthropic, message, textMessage } from "../support/fakeAnthropic.ts"
import type { RunningGateway } from "../support/gateway.ts"

const keepAliveMs = 200

const config = (anthropic: FakeAnthropic) => `
[gateway]
stream_keepalive_ms = ${keepAliveMs}
overhead_header = true
${anthropicSurfaceConfig(anthropic, { pausing: "dummy::slow_second_chunk", broken: "dummy::stream_error" })}`

/** the events of an SSE body: `[name, data]`, each name checked to be its data's type */
const eventsOf = (body: string): Array<[string, any]> =>
  body.split("\n\n").filter((block) => block !== "").map((block) => {
    const match = /^event: ([a-z_]+)\ndata: (.*)$/s.exec(block)
    expect(match, block).not.toBeNull()
    const data = JSON.parse(match![2])
    expect(data.type).toBe(match![1])
    return [match![1], data]
  })

describe("streamed Anthropic Messages", () => {
  let anthropic: FakeAnthropic
  let gateway: RunningGateway
  let client: Anthropic

  const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${gateway.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ max_tokens: 100, stream: true, messages: [{ role: "user", content: "Hi" }], ...body }),
      signal
    })

  beforeAll(async () => {
    ;({ anthropic, gateway, client } = await startAnthropicSurface(config))
  })
  afterAll(async () => {
    await gateway?.stop()
    await anthropic?.close()
  })
  beforeEach(() => anthropic.reset())

  it("streams a function's answer from the dummy provider: the SDK's text events, its final message, Anthropic's event sequence", async () => {
    const stream = client.messages.stream({ model: "gateway::function_name::assistant", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] })
    const pieces: Array<string> = []
    stream.on("text", (text) => pieces.push(text))
    const final = await stream.finalMessage()
    expect(pieces.length).toBeGreaterThan(1)
    expect(pieces.join("")).toBe(dummyHelloText)
    expect(final).toMatchObject({
      type: "message",
      role: "assistant",
      model: "gateway::function_name::assistant",
      content: [{ type: "text", text: dummyHelloText }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 10 },
      gateway_variant_name: "main"
    })
    expect(final.id).toMatch(/^[0-9a-f-]{36}$/)

    const response = await post({ model: "gateway::function_name::assistant" })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    expect(Number(response.headers.get("gateway-overhead-ms"))).toBeGreaterThanOrEqual(0)
    const names = eventsOf(await response.text()).map(([name]) => name)
    expect(names.slice(0, 2)).toEqual(["message_start", "content_block_start"])
    expect(names.slice(2, -3).every((name) => name === "content_block_delta")).toBe(true)
    expect(names.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"])
  })

  it("streams thinking with its signature, text and a tool call from Anthropic intact; the upstream is asked for a stream", async () => {
    const blocks = [
      { type: "thinking", thinking: "The user wants the weather.", signature: "EqQBCkYIARgCKkBsig+/=" },
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } }
    ]
    anthropic.script.push({
      kind: "message",
      body: message(blocks, { usage: { input_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 25 } })
    })
    const stream = client.messages.stream({
      model: "claude-sonnet-4-5",
      max_tokens: 2000,
      thinking: { type: "enabled", budget_tokens: 1024 },
      tools: [weatherTool],
      messages: [{ role: "user", content: "Weather in Paris?" }]
    })
    const signatures: Array<string> = []
    stream.on("signature", (signature) => signatures.push(signature))
    const final = await stream.finalMessage()
    expect(final.content).toEqual(blocks)
    expect(signatures).toEqual(["EqQBCkYIARgCKkBsig+/="])
    expect(final.stop_reason).toBe("tool_use")
    expect(final.usage).toMatchObject({ input_tokens: 30, cache_read_input_tokens: 100, output_tokens: 25 })
    expect(anthropic.requests[0].body).toMatchObject({ stream: true, thinking: { type: "enabled", budget_tokens: 1024 } })
  })

  it("runs a streamed tool-use loop: the streamed tool_use goes back with its tool_result", async () => {
    anthropic.script.push({ kind: "message", body: message([{ type: "tool_use", id: "toolu_07", name: "get_weather", input: { city: "Rome" } }]) })
    const first = await client.messages.stream({
      model: "claude-sonnet-4-5",
      max_tokens: 200,
      tools: [weatherTool],
      messages: [{ role: "user", content: "Weather in Rome?" }]
    }).finalMessage()
    expect(first.content).toEqual([{ type: "tool_use", id: "toolu_07", name: "get_weather", input: { city: "Rome" } }])

    anthropic.script.push({ kind: "message", body: textMessage("Sunny in Rome.") })
    const second = client.messages.stream({
      model: "claude-sonnet-4-5",
      max_tokens: 200,
      tools: [weatherTool],
      messages: toolResultTurn("Weather in Rome?", first.content, "toolu_07", "sunny, 24°C")
    })
    const pieces: Array<string> = []
    second.on("text", (text) => pieces.push(text))
    expect((await second.finalMessage()).content).toEqual([{ type: "text", text: "Sunny in Rome." }])
    expect(pieces.join("")).toBe("Sunny in Rome.")
    const sent = anthropic.requests[1].body
    expect(sent.messages[1]).toEqual({ role: "assistant", content: [{ type: "tool_use", id: "toolu_07", name: "get_weather", input: { city: "Rome" } }] })
    expect(sent.messages[2].content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_07", content: "sunny, 24°C" })
  })

  it("a provider slow to start: the answer is committed (200, message_start) and pinged until its first chunk; the SDK gets the message", async () => {
    anthropic.script.push({ kind: "message", body: textMessage("Worth the wait."), delayMs: 900 })
    const response = await post({ model: "claude-sonnet-4-5" })
    expect(response.status).toBe(200)
    const raw = await response.text()
    const events = eventsOf(raw)
    const firstContent = events.findIndex(([name]) => name === "content_block_start")
    expect(events[0][0]).toBe("message_start")
    // committed at keepAliveMs with a ping, then one every keepAliveMs until the provider's first chunk at 900 ms
    const pings = events.slice(1, firstContent).map(([name]) => name)
    expect(pings.length).toBeGreaterThanOrEqual(3)
    expect(new Set(pings)).toEqual(new Set(["ping"]))
    expect(raw).toContain(`event: ping\ndata: {"type": "ping"}\n\n`)
    expect(events.filter(([name]) => name === "message_start")).toHaveLength(1)
    // the variant is not known when the answer is committed
    expect(events[0][1].message.gateway_variant_name).toBeUndefined()
    expect(events.at(-1)![0]).toBe("message_stop")

    anthropic.script.push({ kind: "message", body: textMessage("Worth the wait."), delayMs: 900 })
    const final = await client.messages.stream({ model: "claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] }).finalMessage()
    expect(final.content).toEqual([{ type: "text", text: "Worth the wait." }])
    expect(final.stop_reason).toBe("end_turn")
  })

  it("a stream whose provider pauses after its first chunk is pinged in the pause", async () => {
    const response = await post({ model: "gateway::function_name::assistant::variant_name::pausing" })
    const events = eventsOf(await response.text())
    const names = events.map(([name]) => name)
    const firstDelta = names.indexOf("content_block_delta")
    const secondDelta = names.indexOf("content_block_delta", firstDelta + 1)
    // the dummy waits 2 s before its second chunk
    expect(names.slice(firstDelta + 1, secondDelta).filter((name) => name === "ping").length).toBeGreaterThanOrEqual(5)
    expect(names.slice(0, firstDelta)).not.toContain("ping")
    expect(events.filter(([name]) => name === "content_block_delta").map(([, data]) => data.delta.text)).toEqual(dummyStreamedPieces)
  })

  it("a provider failing after the stream started: an error event, which the SDK raises", async () => {
    const response = await post({ model: "gateway::function_name::assistant::variant_name::broken" })
    expect(response.status).toBe(200)
    const events = eventsOf(await response.text())
    expect(events[0][0]).toBe("message_start")
    expect(events.at(-1)).toEqual(["error", { type: "error", error: { type: "api_error", message: expect.stringContaining("stream_error") } }])
    expect(events.map(([name]) => name)).not.toContain("message_stop")

    const failed = await client.messages.stream({
      model: "gateway::function_name::assistant::variant_name::broken",
      max_tokens: 100,
      messages: [{ role: "user", content: "Hi" }]
    }).finalMessage().catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(Anthropic.APIError)
    expect((failed as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: "error", error: { type: "api_error" } })
  })

  it("a failure before the start keeps its HTTP status; after the answer was committed, it is its last event", async () => {
    anthropic.script.push({ kind: "error", status: 400, type: "invalid_request_error", message: "prompt is too long" })
    const refused = await client.messages.stream({ model: "claude-sonnet-4-5", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] })
      .finalMessage().catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError)
    expect((refused as Error).message).toContain("prompt is too long")

    anthropic.script.push({ kind: "error", status: 429, type: "rate_limit_error", message: "slow down", delayMs: 600 })
    const response = await post({ model: "claude-sonnet-4-5" })
    expect(response.status).toBe(200)
    const events = eventsOf(await response.text())
    expect(events.map(([name]) => name).slice(0, 2)).toEqual(["message_start", "ping"])
    expect(events.at(-1)).toEqual(["error", { type: "error", error: { type: "rate_limit_error", message: expect.stringContaining("slow down") } }])
  })

  /** reads the stream until `text` came, then hangs up; resolves once the fake saw the gateway give up its call (or after 2 s) */
  const hangUpAfter = async (text: string) => {
    const abort = new AbortController()
    const response = await post({ model: "claude-sonnet-4-5" }, abort.signal)
    const reader = response.body!.getReader()
    let received = ""
    while (!received.includes(text)) received += new TextDecoder().decode((await reader.read()).value)
    abort.abort()
    const deadline = Date.now() + 2000
    while (anthropic.abandoned === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  }

  it("a client hanging up gives the provider call up: before the provider started, and in the middle of its stream", async () => {
    anthropic.script.push({ kind: "message", body: textMessage("Too late."), delayMs: 3000 })
    await hangUpAfter("event: message_start")
    expect(anthropic.abandoned).toBe(1)

    anthropic.reset()
    anthropic.script.push({ kind: "message", body: textMessage("Half of it."), stallMs: 3000 })
    await hangUpAfter("event: content_block_delta")
    expect(anthropic.abandoned).toBe(1)
  })
})
