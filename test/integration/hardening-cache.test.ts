/**
 * Hardening of the model answer cache (issue 10), observability on Postgres, over real HTTP with
 * a fake OpenAI upstream that counts calls and checks credentials:
 * - an answer paid with one provider credential (`dynamic::key`) is never served to a caller
 *   holding another credential, or a bogus one: the provider is asked, with that credential;
 * - with authentication on, one API key's entries are not served to another key, unless
 *   `[gateway.cache] share_across_api_keys = true`;
 * - a lookup on a locked table is abandoned after `lookup_timeout_ms` (the query cancelled) and
 *   the provider answers.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type ApiKey, call, createKeys, psql } from "../support/access.ts"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { completion, type FakeOpenAi, type ReceivedRequest, startFakeOpenAi } from "../support/fakeOpenAi.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, poll } from "../support/observability.ts"

const validCredentials = new Set(["Bearer k1", "Bearer k2", "Bearer house-key"])

/** answers with whose credential it was asked, or 401 for one it does not know */
const upstream = (request: ReceivedRequest) => {
  const authorization = String(request.headers.authorization)
  return validCredentials.has(authorization)
    ? { kind: "json" as const, body: completion({ content: `paid by ${authorization}` }) }
    : { kind: "json" as const, status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error" } } }
}

const config = (apiBase: string, shared: boolean) => `
${observabilityToml()}
[gateway.auth]
enabled = true

[gateway.cache]
share_across_api_keys = ${shared}
lookup_timeout_ms = 300

[models.paid]
routing = ["openai"]
[models.paid.providers.openai]
type = "openai"
model_name = "gpt-fake"
api_base = "${apiBase}"
api_key_location = "dynamic::key"

[models.house]
routing = ["openai"]
[models.house.providers.openai]
type = "openai"
model_name = "gpt-fake"
api_base = "${apiBase}"
api_key_location = "env::HOUSE_KEY"
`

let database: TestDatabase
let fake: FakeOpenAi
let apart: RunningGateway
let shared: RunningGateway
let key1: ApiKey
let key2: ApiKey
let counter = 0

/** a question no other test asks, so that each test has cache entries of its own */
const freshInput = () => ({ messages: [{ role: "user", content: `question ${++counter} ${Date.now()}` }] })

const infer = (gateway: RunningGateway, key: ApiKey, body: Record<string, unknown>) =>
  call(gateway, "POST", "/inference", { key, body: { cache_options: { enabled: "on" }, ...body } })

const text = (answer: { body: any }) => answer.body.content?.[0]?.text

/** waits until the answer of `inferenceId` is stored as a cache entry */
const cached = (inferenceId: string) =>
  poll(`the answer of ${inferenceId} to be in the cache`, async () => {
    const rows = await queryDatabase(
      database,
      `SELECT 1 FROM model_inference WHERE inference_id = '${inferenceId}' AND cache_key IS NOT NULL`
    )
    return rows.length === 1 ? true : undefined
  })

beforeAll(async () => {
  ;[database, fake] = await Promise.all([freshDatabase("postgres"), startFakeOpenAi()])
  ;[key1, key2] = await createKeys(database.url, 2)
  const env = { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url, HOUSE_KEY: "house-key" }
  ;[apart, shared] = await Promise.all([
    startGateway({ config: config(fake.apiBase, false), env }),
    startGateway({ config: config(fake.apiBase, true), env })
  ])
})
afterAll(async () => {
  await Promise.all([apart?.stop(), shared?.stop()])
  await fake?.close()
  await database?.drop()
})
beforeEach(() => {
  fake.reset()
  fake.fallback = upstream
})

describe("the cache key holds the caller's provider credential", () => {
  it("an answer paid with k1 is served again for k1, never to a bogus or another credential", async () => {
    const input = freshInput()
    const first = await infer(apart, key1, { model_name: "paid", input, credentials: { key: "k1" } })
    expect(first.status, first.text).toBe(200)
    expect(text(first)).toBe("paid by Bearer k1")
    await cached(first.body.inference_id)

    // a bogus credential: the provider is asked with it and refuses; the cached answer is not given
    const bogus = await infer(apart, key1, { model_name: "paid", input, credentials: { key: "stolen?" } })
    expect(bogus.status, bogus.text).toBe(502)
    expect(bogus.text).not.toContain("paid by")
    expect(fake.requests.map((request) => request.headers.authorization)).toEqual(["Bearer k1", "Bearer stolen?"])

    // another valid credential pays for its own answer
    const other = await infer(apart, key1, { model_name: "paid", input, credentials: { key: "k2" } })
    expect(other.status, other.text).toBe(200)
    expect(text(other)).toBe("paid by Bearer k2")
    expect(fake.requests).toHaveLength(3)

    // the same credential again: served from the cache, the provider not asked
    const again = await infer(apart, key1, { model_name: "paid", input, credentials: { key: "k1" } })
    expect(again.status, again.text).toBe(200)
    expect(text(again)).toBe("paid by Bearer k1")
    expect(again.body.usage).toEqual({ input_tokens: 0, output_tokens: 0 })
    expect(fake.requests).toHaveLength(3)
  })
})

describe("with authentication on, API keys have entries of their own", () => {
  it("key 1's entry is not served to key 2; key 1 is served it again", async () => {
    const input = freshInput()
    const first = await infer(apart, key1, { model_name: "house", input })
    expect(first.status, first.text).toBe(200)
    await cached(first.body.inference_id)

    const second = await infer(apart, key2, { model_name: "house", input })
    expect(second.status, second.text).toBe(200)
    expect(second.body.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
    expect(fake.requests).toHaveLength(2)

    const again = await infer(apart, key1, { model_name: "house", input })
    expect(again.body.usage).toEqual({ input_tokens: 0, output_tokens: 0 })
    expect(fake.requests).toHaveLength(2)
  })

  it("share_across_api_keys = true: key 2 is served key 1's entry", async () => {
    const input = freshInput()
    const first = await infer(shared, key1, { model_name: "house", input })
    expect(first.status, first.text).toBe(200)
    await cached(first.body.inference_id)

    const second = await infer(shared, key2, { model_name: "house", input })
    expect(second.status, second.text).toBe(200)
    expect(text(second)).toBe("paid by Bearer house-key")
    expect(second.body.usage).toEqual({ input_tokens: 0, output_tokens: 0 })
    expect(fake.requests).toHaveLength(1)
  })
})

/** a psql session holding `model_inference` in ACCESS EXCLUSIVE mode until `release` */
const lockModelInference = async (): Promise<{ release: () => Promise<void> }> => {
  const url = new URL(database.url)
  const session: ChildProcess = spawn("psql", [
    "-h", url.hostname, "-p", url.port || "5432", "-U", decodeURIComponent(url.username) || "postgres",
    "-d", database.name, "-v", "ON_ERROR_STOP=1", "-At"
  ])
  let output = ""
  session.stdout!.on("data", (data) => (output += data))
  session.stderr!.on("data", (data) => (output += data))
  const exited = new Promise<void>((resolve) => session.on("exit", () => resolve()))
  session.stdin!.write("BEGIN; LOCK TABLE model_inference IN ACCESS EXCLUSIVE MODE; SELECT 'locked';\n")
  await poll("the lock on model_inference", async () => (output.includes("locked") ? true : undefined), { last: () => output })
  return {
    release: async () => {
      session.stdin!.end("COMMIT;\n")
      await exited
    }
  }
}

describe("a cache lookup on a locked table", () => {
  it("is abandoned after lookup_timeout_ms, its query cancelled; the provider answers", async () => {
    const lock = await lockModelInference()
    try {
      const answer = await infer(apart, key1, { model_name: "house", input: freshInput() })
      expect(answer.status, answer.text).toBe(200)
      expect(text(answer)).toBe("paid by Bearer house-key")
      expect(answer.body.usage).toEqual({ input_tokens: 12, output_tokens: 7 })
      expect(fake.requests).toHaveLength(1)
      // the database stops too: no lookup of the gateway's waits on the lock any more
      await poll("the abandoned lookup to be cancelled", async () => {
        const waiting = await psql(
          database.url,
          `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'llm-gateway' AND wait_event_type = 'Lock' AND query LIKE '%cache_key =%'`
        )
        return waiting === "0" ? true : undefined
      })
    } finally {
      await lock.release()
    }
    const warning = await poll("the warning in the log", async () =>
      /cache lookup failed, calling the provider: no answer within 300 ms/.test(apart.log()) ? true : undefined)
    expect(warning).toBe(true)
  })
})
