/**
 * `[gateway] base_path` (issue 11), over HTTP with the real command line: every route, the
 * OpenAPI document and the reference page included, is served under the prefix (as TensorZero
 * does, /status and /health too); nothing is served outside it (404); the document's server is
 * the prefix; and errors keep their family's shape under it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call } from "../support/access.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const base = "/custom/prefix"

const config = (basePath: string) => `
[gateway]
base_path = "${basePath}"

[functions.chat]
type = "chat"
[functions.chat.variants.only]
type = "chat_completion"
model = "dummy::hello"
`

const input = { messages: [{ role: "user", content: "Hello" }] }

describe("[gateway] base_path", () => {
  let gateway: RunningGateway

  beforeAll(async () => {
    // a trailing slash is dropped
    gateway = await startGateway({ config: config(`${base}/`) })
  })
  afterAll(async () => {
    await gateway?.stop()
  })

  it("serves every route under the prefix", async () => {
    const inference = await gateway.post(`${base}/inference`, { function_name: "chat", input })
    expect(inference.status, JSON.stringify(inference.body)).toBe(200)
    expect(inference.body.variant_name).toBe("only")
    const streamed = await gateway.stream(`${base}/inference`, { function_name: "chat", input, stream: true })
    expect(streamed.status).toBe(200)
    expect(streamed.events.at(-1)).toBe("[DONE]")
    const completion = await gateway.post(`${base}/openai/v1/chat/completions`, {
      model: "gateway::function_name::chat",
      messages: [{ role: "user", content: "Hello" }]
    })
    expect(completion.status).toBe(200)
    expect(completion.body.object).toBe("chat.completion")
    expect((await gateway.get(`${base}/openai/v1/models`)).body.data.map((model: any) => model.id))
      .toContain("gateway::function_name::chat")
    expect((await gateway.get(`${base}/status`)).body).toMatchObject({ status: "ok" })
    expect((await gateway.get(`${base}/health`)).body).toEqual({ gateway: "ok" })
    // the routes reached, answering as they do without a prefix
    const feedback = await gateway.post(`${base}/feedback`, { metric_name: "x", episode_id: "y", value: 1 })
    expect(feedback.status).toBe(400)
    expect(Object.keys(feedback.body)).toEqual(["error"])
    expect((await gateway.post(`${base}/v1/inferences/list_inferences`, {})).status).toBe(503)
    const docs = await fetch(`${gateway.url}${base}/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/)
  })

  it("serves nothing outside the prefix", async () => {
    for (const [method, route] of [
      ["POST", "/inference"],
      ["GET", "/status"],
      ["GET", "/health"],
      ["GET", "/openapi.json"],
      ["GET", "/docs"],
      ["POST", "/openai/v1/chat/completions"],
      ["GET", "/custom/inference"],
      ["POST", "/custom/prefixinference"]
    ] as const) {
      const answer = await call(gateway, method, route, method === "POST" ? { body: {} } : {})
      expect(answer.status, `${method} ${route}`).toBe(404)
      // outside the prefix no route is OpenAI's: the gateway's own shape
      expect(answer.body, `${method} ${route}`).toEqual({ error: `no route for ${method} ${route}` })
    }
  })

  it("keeps each family's error shape, 404 and 405 under the prefix", async () => {
    const wrongMethod = await call(gateway, "GET", `${base}/inference`)
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.body).toEqual({ error: `${base}/inference accepts POST, not GET` })
    const openAiMissing = await call(gateway, "GET", `${base}/openai/v1/nowhere`)
    expect(openAiMissing.status).toBe(404)
    expect(openAiMissing.body.error).toMatchObject({ message: `no route for GET ${base}/openai/v1/nowhere`, type: "not_found_error" })
    const invalid = await call(gateway, "POST", `${base}/openai/v1/chat/completions`, { body: { model: "gateway::function_name::chat" } })
    expect(invalid.status).toBe(400)
    expect(invalid.body.error.type).toBe("invalid_request_error")
    const unknownFunction = await call(gateway, "POST", `${base}/inference`, { body: { function_name: "nope", input } })
    expect(unknownFunction.status).toBe(404)
    expect(Object.keys(unknownFunction.body)).toEqual(["error"])
  })

  it("publishes the prefix as the document's server, the paths as the contract has them", async () => {
    const spec = (await gateway.get(`${base}/openapi.json`)).body
    expect(spec.servers).toEqual([{ url: base, description: expect.any(String) }])
    expect(Object.keys(spec.paths)).toContain("/inference")
    // every documented route answers at server + path
    for (const [path, operations] of Object.entries(spec.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations)) {
        const answer = await call(gateway, method.toUpperCase() as "GET" | "POST", `${spec.servers[0].url}${path}`, method === "post" ? { body: {} } : {})
        expect(answer.status, `${method} ${path}`).not.toBe(405)
        expect(answer.text, `${method} ${path}`).not.toMatch(/no route for/)
      }
    }
  })
})

describe("[gateway] base_path refused at start-up", () => {
  it("when it is not a path", async () => {
    const started = startGateway({ config: config("custom prefix") })
    await expect(started).rejects.toThrow(/base_path/)
  })
})
