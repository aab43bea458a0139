/**
 * Upstream failures of the `openai` provider and how the gateway reports them: refused
 * connections, bodies that are not JSON or lack a message, error bodies, dropped connections.
 */
import * as http from "node:http"
import * as net from "node:net"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeOpenAi, recordedAnswer, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

/** a port nothing listens on: bound, then released */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

const config = (apiBase: string, deadBase: string) => `
[models.m]
routing = ["a"]
[models.m.providers.a]
type = "openai"
model_name = "gpt-test"
api_base = "${apiBase}"
api_key_location = "env::TEST_KEY_A"

[models.dead]
routing = ["refused"]
[models.dead.providers.refused]
type = "openai"
model_name = "gpt-dead"
api_base = "${deadBase}"
api_key_location = "env::TEST_KEY_A"

[models.nokey]
routing = ["k"]
[models.nokey.providers.k]
type = "openai"
model_name = "gpt-nokey"
api_base = "${apiBase}"
api_key_location = "env::TEST_KEY_NEVER_SET"

[functions.chat]
type = "chat"
[functions.chat.variants.v]
type = "chat_completion"
model = "m"
weight = 1
[functions.chat.variants.dead]
type = "chat_completion"
model = "dead"
weight = 0
[functions.chat.variants.nokey]
type = "chat_completion"
model = "nokey"
weight = 0
`

const input = { messages: [{ role: "user", content: "hi" }] }

describe("upstream failures of the openai provider", () => {
  let fake: FakeOpenAi
  let gateway: RunningGateway

  beforeAll(async () => {
    fake = await startFakeOpenAi()
    const port = await closedPort()
    gateway = await startGateway({
      config: config(fake.apiBase, `http://127.0.0.1:${port}/v1/`),
      env: { TEST_KEY_A: "key-a", TEST_KEY_NEVER_SET: undefined }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await fake?.close()
  })
  beforeEach(() => fake.reset())

  const expectProviderError = (response: { status: number; body: any }, status: number, fragment: string | RegExp) => {
    expect(response.status, JSON.stringify(response.body)).toBe(status)
    expect(Object.keys(response.body)).toEqual(["error"])
    expect(typeof response.body.error).toBe("string")
    if (typeof fragment === "string") expect(response.body.error).toContain(fragment)
    else expect(response.body.error).toMatch(fragment)
  }

  it("answers 502 naming the failure when the upstream refuses the connection", async () => {
    const response = await gateway.post("/inference", { function_name: "chat", variant_name: "dead", input })
    expectProviderError(response, 502, "provider \"refused\"")
    expect(response.body.error).toMatch(/ECONNREFUSED|connect/i)
  })

  it("answers 502 naming the failure for a streamed inference when the upstream refuses the connection", async () => {
    const response = await gateway.post("/inference", { function_name: "chat", variant_name: "dead", input, stream: true })
    expectProviderError(response, 502, "provider \"refused\"")
    expect(response.body.error).toMatch(/ECONNREFUSED|connect/i)
  })

  it("answers 502 when the upstream's 200 body is not JSON", async () => {
    fake.script.push({ kind: "text", status: 200, body: "<html>gateway page</html>" })
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expectProviderError(response, 502, "not JSON")
    expect(fake.requests).toHaveLength(1)
  })

  it("answers 502 when the upstream's JSON has no choices[0].message", async () => {
    fake.script.push(recordedAnswer("no-choices"))
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expectProviderError(response, 502, "choices[0].message")
  })

  it("answers 502 saying the credentials were refused, with the upstream's own message, without the key it echoes", async () => {
    fake.script.push(recordedAnswer("error-invalid-key"))
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expectProviderError(response, 502, "credentials refused, HTTP 401: Incorrect API key provided: [REDACTED]. You can find your API key")
    expect(response.body.error).not.toContain("sk-test-key-123")
  })

  it("keeps a non-JSON error body's text in the error", async () => {
    fake.script.push({ kind: "text", status: 502, body: "Bad Gateway from the proxy" })
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expectProviderError(response, 502, "HTTP 502: Bad Gateway from the proxy")
  })

  it("answers 502 when the upstream drops the connection without answering", async () => {
    fake.script.push({ kind: "destroy" })
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expectProviderError(response, 502, "request failed")
    expect(fake.requests).toHaveLength(1)
  })

  it("answers 502 naming the variable when a pinned provider's credential variable is not set, without calling it", async () => {
    const response = await gateway.post("/inference", { function_name: "chat", variant_name: "nokey", input })
    expectProviderError(response, 502, "TEST_KEY_NEVER_SET")
    expect(fake.requests).toHaveLength(0)
  })

  it("cancels the upstream call when the client hangs up before the answer", async () => {
    fake.script.push({ kind: "hang" })
    const abortedBefore = fake.aborted()
    const request = http.request(`${gateway.url}/inference`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      agent: false
    })
    request.on("error", () => {})
    request.end(JSON.stringify({ function_name: "chat", input }))
    const deadline = Date.now() + 3_000
    while (fake.requests.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(fake.requests).toHaveLength(1)
    request.destroy()
    while (fake.aborted() === abortedBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fake.aborted()).toBe(abortedBefore + 1)
  })

  it("keeps serving after upstream failures", async () => {
    fake.script.push({ kind: "destroy" }, { kind: "text", status: 200, body: "nope" })
    await gateway.post("/inference", { function_name: "chat", input })
    await gateway.post("/inference", { function_name: "chat", input })
    const response = await gateway.post("/inference", { function_name: "chat", input })
    expect(response.status).toBe(200)
    expect(response.body.content).toEqual([{ type: "text", text: "Hello from fake OpenAI" }])
  })
})
