/**
 * Hardening (issue 33, finding 1): a request's model name must not choose where the gateway
 * sends its credentials. The Vertex short-hands build the provider's host from the location in
 * the model name; a location such as `127.0.0.1:<port>#` once sent the prompt and the gateway's
 * GCP access token to that address. Here a local "attacker" TCP server listens where such names
 * point: every attack through /inference (plain and streamed), the OpenAI-compatible route
 * (plain and streamed) and the embeddings route is refused with a 400 naming the model field,
 * as is a service account key file given with a request (`dynamic::`) whose token endpoint is
 * not Google's; the attacker never gets a connection, no access token is even fetched, and a
 * configured Vertex model (the fake Gemini server) still answers afterwards.
 */
import * as net from "node:net"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeGemini, startFakeGemini } from "../support/fakeGemini.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

/** A TCP server that counts the connections it gets (a TLS client hello is one too) and closes them. */
const startAttacker = async () => {
  let connections = 0
  const server = net.createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const config = (fake: FakeGemini) => `
[models.vertex]
routing = ["v"]
[models.vertex.providers.v]
type = "gcp_vertex_gemini"
model_name = "projects/fake-project/locations/us-central1/publishers/google/models/gemini-2.5-pro"
api_base = "${fake.vertexBase}"

# the service account comes with each request
[models.vertex_dynamic]
routing = ["v"]
[models.vertex_dynamic.providers.v]
type = "gcp_vertex_gemini"
model_name = "projects/fake-project/locations/us-central1/publishers/google/models/gemini-2.5-pro"
api_base = "${fake.vertexBase}"
credential_location = "dynamic::gcp_key"
`

/** the short-hands a hostile request names, each with what the refusal must point at */
const attacks = (port: number): ReadonlyArray<{ readonly model: string; readonly part: string }> => {
  const host = `127.0.0.1:${port}`
  return [
    { model: `gcp_vertex_gemini::projects/p/locations/${host}#/publishers/google/models/m`, part: "location" },
    { model: `gcp_vertex_gemini::projects/p/locations/${host}?/publishers/google/models/m`, part: "location" },
    { model: `gcp_vertex_gemini::projects/p/locations/${host}#/endpoints/e`, part: "location" },
    { model: `gcp_vertex_gemini::projects/p/locations/${host}\\/publishers/google/models/m`, part: "location" },
    { model: `gcp_vertex_gemini::projects/p/locations/x@${host}#/publishers/google/models/m`, part: "location" },
    { model: `gcp_vertex_anthropic::projects/p/locations/${host}#/publishers/anthropic/models/m`, part: "location" },
    { model: `gcp_vertex_anthropic::projects/p/locations/${host}?/publishers/anthropic/models/m`, part: "location" },
    { model: `gcp_vertex_anthropic::projects/p/locations/${host}#/endpoints/e`, part: "location" },
    // the other parts stay on Google's host, but may not reshape its path or query either
    { model: "gcp_vertex_gemini::projects/p?x=/locations/us-central1/publishers/google/models/m", part: "project" },
    { model: "gcp_vertex_gemini::projects/p/locations/us-central1/publishers/google/models/m#x", part: "model" },
    { model: "gcp_vertex_anthropic::projects/p/locations/us-east5/publishers/anthropic/models/m?alt=x", part: "model" },
    { model: "gcp_vertex_gemini::projects/p/locations/us-central1/endpoints/..", part: "endpoint" },
    { model: "google_ai_studio_gemini::m/../../files", part: "model" }
  ]
}

const input = { messages: [{ role: "user", content: [{ type: "text", text: "the prompt" }] }] }

describe("a model name cannot redirect the gateway's calls (SSRF)", () => {
  let fake: FakeGemini
  let attacker: Awaited<ReturnType<typeof startAttacker>>
  let gateway: RunningGateway

  beforeAll(async () => {
    ;[fake, attacker] = await Promise.all([startFakeGemini(), startAttacker()])
    gateway = await startGateway({
      config: config(fake),
      files: { "service-account.json": fake.serviceAccount },
      env: { GCP_VERTEX_CREDENTIALS_PATH: "service-account.json", GOOGLE_AI_STUDIO_API_KEY: fake.apiKey }
    })
  })
  afterAll(async () => {
    await gateway?.stop()
    await Promise.all([fake?.close(), attacker?.close()])
  })

  it("POST /inference, plain and streamed: a 400 naming model_name and the part at fault; nothing sent anywhere", async () => {
    for (const { model, part } of attacks(attacker.port)) {
      for (const stream of [false, true]) {
        const response = await gateway.post("/inference", { model_name: model, input, stream })
        expect(response.status, `${model} ${JSON.stringify(response.body)}`).toBe(400)
        expect(response.body.error).toMatch(/^model_name: /)
        expect(response.body.error).toContain(part)
      }
    }
    expect(attacker.connections()).toBe(0)
    // not even the access token was fetched: the call was refused before anything was sent
    expect(fake.tokensIssued()).toBe(0)
    expect(fake.requests).toHaveLength(0)
  })

  it("POST /openai/v1/chat/completions (gateway::model_name::), plain and streamed: a 400 in OpenAI's shape naming model", async () => {
    for (const { model, part } of attacks(attacker.port)) {
      for (const stream of [false, true]) {
        const response = await gateway.post("/openai/v1/chat/completions", {
          model: `gateway::model_name::${model}`,
          messages: [{ role: "user", content: "the prompt" }],
          stream
        })
        expect(response.status, `${model} ${JSON.stringify(response.body)}`).toBe(400)
        expect(response.body.error.message).toMatch(/^model: /)
        expect(response.body.error.message).toContain(part)
      }
    }
    expect(attacker.connections()).toBe(0)
    expect(fake.tokensIssued()).toBe(0)
    expect(fake.requests).toHaveLength(0)
  })

  it("POST /openai/v1/embeddings: refused with a 400 naming model; nothing sent", async () => {
    for (const { model } of attacks(attacker.port)) {
      const response = await gateway.post("/openai/v1/embeddings", { model, input: "the prompt" })
      expect(response.status, `${model} ${JSON.stringify(response.body)}`).toBe(400)
      expect(response.body.error.message).toMatch(/^model: /)
    }
    expect(attacker.connections()).toBe(0)
    expect(fake.tokensIssued()).toBe(0)
  })

  it("a service account key file given with a request may not name its own token endpoint: a 400, nothing sent", async () => {
    const keyFile = JSON.stringify({ ...JSON.parse(fake.serviceAccount), token_uri: `http://127.0.0.1:${attacker.port}/token` })
    for (const stream of [false, true]) {
      const response = await gateway.post("/inference", { model_name: "vertex_dynamic", input, stream, credentials: { gcp_key: keyFile } })
      expect(response.status, JSON.stringify(response.body)).toBe(400)
      expect(response.body.error).toBe(
        `credentials: the GCP service account key file given with the request names the token endpoint "http://127.0.0.1:${attacker.port}/token"; ` +
          "one given with a request may only use https://oauth2.googleapis.com/token"
      )
    }
    expect(attacker.connections()).toBe(0)
    expect(fake.tokensIssued()).toBe(0)
    expect(fake.requests).toHaveLength(0)
  })

  it("the gateway still answers a configured Vertex model afterwards, plain and streamed, and the attacker got nothing", async () => {
    const plain = await gateway.post("/inference", { model_name: "vertex", input })
    expect(plain.status, JSON.stringify(plain.body)).toBe(200)
    expect(plain.body.content[0].text).toBe("Hello from fake Gemini")
    const streamed = await gateway.stream("/inference", { model_name: "vertex", input, stream: true })
    expect(streamed.status).toBe(200)
    expect(streamed.events.at(-1)).toBe("[DONE]")
    expect(fake.requests.map((request) => request.path)).toEqual([
      "/v1/projects/fake-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
      "/v1/projects/fake-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    ])
    expect(fake.requests[0].headers.authorization).toMatch(/^Bearer ya29\.fake-/)
    expect(attacker.connections()).toBe(0)
  })
})
