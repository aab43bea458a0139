/**
 * Authentication refusals (issue 5, "Authentication"), over HTTP against a real gateway with
 * `[gateway.auth] enabled = true` and keys made by the real command line: every way a request
 * can lack a valid key is a 401 with its own message, in `{"error": "..."}` on the native
 * endpoints and in OpenAI's shape under /openai/v1 (the SDK raising AuthenticationError); the
 * secret never shows, in answers or in the log; /status and /health need no key; and a gateway
 * that should check keys and cannot reach Postgres does not start.
 */
import OpenAI from "openai"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, type ApiKey, call, closedPort, createKey, disableKey, dummyInference, pollUntil } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { runGateway, type RunningGateway, startGateway, writeFiles } from "../support/gateway.ts"
import { observabilityToml } from "../support/observability.ts"

const config = `
[gateway]
debug = true
${observabilityToml()}
[gateway.auth]
enabled = true
`

let database: TestDatabase
let gateway: RunningGateway
let active: ApiKey
let disabled: ApiKey
let expiring: ApiKey
let expiresAt: number

beforeAll(async () => {
  database = await freshDatabase("postgres")
  // in the future when the CLI checks it, even on a slow, busy machine
  expiresAt = Math.ceil((Date.now() + 6_000) / 1000) * 1000
  ;[active, disabled, expiring] = await Promise.all([
    createKey(database.url),
    createKey(database.url),
    createKey(database.url, ["--expiration", new Date(expiresAt).toISOString()])
  ])
  await disableKey(database.url, disabled.publicId)
  gateway = await startGateway({
    config,
    env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url }
  })
})
afterAll(async () => {
  await gateway?.stop()
  await database?.drop()
})

/** every endpoint that needs a key, with a request that succeeds given one */
const endpoints: ReadonlyArray<{ method: "GET" | "POST"; route: string; body?: unknown; openai: boolean }> = [
  { method: "POST", route: "/inference", body: dummyInference(), openai: false },
  { method: "POST", route: "/feedback", body: { metric_name: "comment", episode_id: "0190c3d4-0000-7000-8000-000000000000", value: "x" }, openai: false },
  { method: "POST", route: "/v1/inferences/get_inferences", body: { ids: [] }, openai: false },
  { method: "POST", route: "/v1/inferences/list_inferences", body: {}, openai: false },
  {
    method: "POST",
    route: "/openai/v1/chat/completions",
    body: { model: "gateway::model_name::dummy::hello", messages: [{ role: "user", content: "Hi" }] },
    openai: true
  },
  { method: "GET", route: "/openai/v1/models", openai: true }
]

/** the message of a 401 in the shape of its endpoint family, checked */
const refusal = (answer: Answer, openai: boolean): string => {
  expect(answer.status, answer.text).toBe(401)
  expect(answer.headers.get("content-type")).toContain("application/json")
  if (openai) {
    expect(answer.body).toEqual({
      error: { message: expect.any(String), type: "authentication_error", param: null, code: null }
    })
    return answer.body.error.message
  }
  expect(answer.body).toEqual({ error: expect.any(String) })
  return answer.body.error
}

const wrongSecret = () => `sk-gw-${active.publicId}-${"W".repeat(48)}`

/** each case: the Authorization header (undefined: none) and the message it must get */
const cases = (): ReadonlyArray<{ name: string; authorization: string | undefined; message: string | RegExp }> => [
  { name: "no header", authorization: undefined, message: `missing API key: send the header "Authorization: Bearer <API key>"` },
  { name: "an empty header", authorization: "", message: `missing API key: send the header "Authorization: Bearer <API key>"` },
  { name: "Basic", authorization: `Basic ${Buffer.from(`user:${active.key}`).toString("base64")}`, message: `the Authorization header must be "Bearer <API key>"` },
  { name: "the key without a scheme", authorization: active.key, message: `the Authorization header must be "Bearer <API key>"` },
  { name: "Bearer alone", authorization: "Bearer", message: `the Authorization header must be "Bearer <API key>"` },
  { name: "two words after Bearer", authorization: `Bearer ${active.key} extra`, message: `the Authorization header must be "Bearer <API key>"` },
  { name: "an OpenAI key", authorization: "Bearer sk-proj-abcdefghijklmnopqrstuvwxyz", message: "malformed API key: expected sk-gw-<12-character public id>-<secret>" },
  { name: "a short secret", authorization: `Bearer sk-gw-${active.publicId}-${active.secret.slice(0, 47)}`, message: "malformed API key: expected sk-gw-<12-character public id>-<secret>" },
  { name: "an unknown key", authorization: `Bearer sk-gw-zzzzzzzzzzzz-${active.secret}`, message: "unknown API key" },
  { name: "a wrong secret for an existing public id", authorization: `Bearer ${wrongSecret()}`, message: "unknown API key" },
  { name: "a disabled key", authorization: `Bearer ${disabled.key}`, message: `API key ${disabled.publicId} is disabled` },
  {
    name: "an expired key",
    authorization: `Bearer ${expiring.key}`,
    message: `API key ${expiring.publicId} expired at ${new Date(expiresAt).toISOString()}`
  }
]

const secrets = () => [active.secret, disabled.secret, expiring.secret, "W".repeat(48)]

describe("401 on every authenticated endpoint", () => {
  it("a valid key passes everywhere", async () => {
    const inference = await call(gateway, "POST", "/inference", { key: active, body: dummyInference() })
    expect(inference.status, inference.text).toBe(200)
    for (const endpoint of endpoints) {
      const body = endpoint.route === "/feedback"
        ? { metric_name: "comment", inference_id: inference.body.inference_id, value: "x" }
        : endpoint.body
      const answer = await call(gateway, endpoint.method, endpoint.route, { key: active, body })
      expect(answer.status, `${endpoint.route}: ${answer.text}`).toBe(200)
    }
  })

  it("authentication comes before the body: a malformed or oversized body without a key is a 401", async () => {
    for (const body of ["{not json", JSON.stringify({ unknown_field: 1 })]) {
      const answer = await fetch(`${gateway.url}/inference`, { method: "POST", headers: { "content-type": "application/json" }, body })
      expect(answer.status).toBe(401)
      // the scheme the client should use, as HTTP asks of a 401
      expect(answer.headers.get("www-authenticate")).toBe("Bearer")
    }
    const big = await fetch(`${gateway.url}/inference`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${wrongSecret()}` },
      body: JSON.stringify({ model_name: "dummy::hello", input: { messages: [{ role: "user", content: "x".repeat(1_000_000) }] } })
    })
    expect(big.status).toBe(401)
  })

  it("each case has its own message, in the shape of the endpoint, and never the secret", async () => {
    // the expiring key must have expired; a moment before, it still worked
    await pollUntil(
      () => call(gateway, "GET", "/openai/v1/models", { key: expiring }),
      (answer) => answer.status === 401,
      10_000
    )
    const messages = new Map<string, string>()
    for (const endpoint of endpoints) {
      for (const { name, authorization, message } of cases()) {
        const answer = await call(gateway, endpoint.method, endpoint.route, { body: endpoint.body, authorization })
        const got = refusal(answer, endpoint.openai)
        expect(got, `${endpoint.route}, ${name}`).toEqual(message)
        for (const secret of secrets()) expect(answer.text).not.toContain(secret)
        if (endpoint.route === "/inference") messages.set(name, got)
      }
    }
    // distinct messages, but an unknown key and a wrong secret look the same
    expect(messages.get("an unknown key")).toBe(messages.get("a wrong secret for an existing public id"))
    const distinct = new Set([
      messages.get("no header"),
      messages.get("Basic"),
      messages.get("an OpenAI key"),
      messages.get("an unknown key"),
      messages.get("a disabled key"),
      messages.get("an expired key")
    ])
    expect(distinct.size).toBe(6)
  })

  it("the OpenAI SDK raises AuthenticationError with the gateway's message", async () => {
    const attempts: Array<[string, string]> = [
      [wrongSecret(), "unknown API key"],
      [disabled.key, "is disabled"],
      ["not-a-gateway-key", "malformed API key"]
    ]
    for (const [apiKey, message] of attempts) {
      const client = new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey, maxRetries: 0 })
      for (const attempt of [
        () => client.chat.completions.create({ model: "gateway::model_name::dummy::hello", messages: [{ role: "user", content: "Hi" }] }),
        () => client.models.list()
      ]) {
        const error = await attempt().then(() => undefined, (caught: unknown) => caught)
        expect(error).toBeInstanceOf(OpenAI.AuthenticationError)
        const typed = error as InstanceType<typeof OpenAI.AuthenticationError>
        expect(typed.status).toBe(401)
        expect(typed.type).toBe("authentication_error")
        expect(typed.message).toContain(message)
        expect(typed.message).not.toContain(active.secret)
      }
    }
  })

  it("a request with no valid key calls no model and stores nothing", async () => {
    const answer = await call(gateway, "POST", "/inference", { body: dummyInference({ text: "unauthenticated request" }) })
    expect(answer.status).toBe(401)
    const listed = await call(gateway, "POST", "/v1/inferences/list_inferences", { key: active, body: {} })
    expect(listed.status).toBe(200)
    expect(JSON.stringify(listed.body)).not.toContain("unauthenticated request")
  })

  it("/status and /health answer without a key, and ignore a bad one", async () => {
    for (const route of ["/status", "/health"]) {
      for (const authorization of [undefined, "Basic abc", `Bearer ${wrongSecret()}`]) {
        const answer = await call(gateway, "GET", route, { authorization })
        expect(answer.status, `${route} ${authorization}: ${answer.text}`).toBe(200)
      }
    }
  })

  it("the gateway's log (at debug level) never holds a secret", async () => {
    // give the log a moment to catch up with the requests above
    await new Promise((resolve) => setTimeout(resolve, 100))
    const log = gateway.log()
    expect(log).toContain("authentication: on")
    for (const secret of secrets()) expect(log).not.toContain(secret)
  })
})

describe("start-up with authentication on", () => {
  const authOnly = "[gateway.auth]\nenabled = true\n"
  const start = (env: Record<string, string | undefined>) => {
    const dir = writeFiles({ "config.toml": authOnly })
    return runGateway(["--config-file", path.join(dir, "config.toml")], {
      env: { GATEWAY_BIND_ADDRESS: "127.0.0.1:0", GATEWAY_ANALYTICS_DB_URL: undefined, ...env },
      cwd: dir
    })
  }

  it("fails with a message naming GATEWAY_RELATIONAL_DB_URL when it is unset", async () => {
    const result = await start({ GATEWAY_RELATIONAL_DB_URL: undefined })
    expect(result.code).toBe(1)
    expect(result.stderr).not.toContain("Listening on")
    expect(result.stderr).toContain("[gateway.auth] enabled = true needs GATEWAY_RELATIONAL_DB_URL")
  })

  it("fails, quickly and clearly, when Postgres does not answer", async () => {
    const port = await closedPort()
    const started = Date.now()
    const result = await start({ GATEWAY_RELATIONAL_DB_URL: `postgres://postgres@127.0.0.1:${port}/nothing` })
    expect(result.code).toBe(1)
    expect(result.stderr).not.toContain("Listening on")
    expect(result.stderr).toContain("GATEWAY_RELATIONAL_DB_URL")
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it("fails when the URL is not a postgres:// URL", async () => {
    const result = await start({ GATEWAY_RELATIONAL_DB_URL: "mysql://127.0.0.1/keys" })
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("GATEWAY_RELATIONAL_DB_URL must be a postgres:// URL")
  })
})
