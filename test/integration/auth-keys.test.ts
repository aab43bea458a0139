/**
 * API keys through the real command line (issue 5, "Keys"): `--create-api-key` and
 * `--disable-api-key` (and `gateway api-key create|disable`) against the real Postgres, and what
 * a client of running gateways sees of a key's life: it works on every authenticated endpoint,
 * stops working within `cache_ttl_ms` of being disabled (also in a second process that served it
 * a moment before), and stops working once its expiration passed.
 */
import { createHash } from "node:crypto"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKey, call, closedPort, createKey, dummyInference, keyPattern, parseKey, pollUntil, psql, withKey } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { runGateway, type RunningGateway, startGateway } from "../support/gateway.ts"
import { observabilityToml, waitForFeedback, waitForInference } from "../support/observability.ts"

const config = (cacheTtlMs?: number) => `
${observabilityToml()}
[gateway.auth]
enabled = true
${cacheTtlMs === undefined ? "" : `cache_ttl_ms = ${cacheTtlMs}`}

[functions.chat]
type = "chat"
[functions.chat.variants.text]
type = "chat_completion"
model = "dummy::hello"
`

let database: TestDatabase
/** two processes with the default key cache (1 s), one without a cache */
let first: RunningGateway
let second: RunningGateway
let uncached: RunningGateway

const relationalEnv = () => ({ GATEWAY_RELATIONAL_DB_URL: database.url })

beforeAll(async () => {
  database = await freshDatabase("postgres")
  const env = { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url }
  ;[first, second, uncached] = await Promise.all([
    startGateway({ config: config(), env }),
    startGateway({ config: config(), env }),
    startGateway({ config: config(0), env })
  ])
})
afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop(), uncached?.stop()])
  await database?.drop()
})

const infer = (gateway: RunningGateway, key: ApiKey | undefined) =>
  call(gateway, "POST", "/inference", { key, body: dummyInference() })

const sdk = (gateway: RunningGateway, key: ApiKey) =>
  new OpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: key.key, maxRetries: 0 })

/** the number of stored keys */
const keyCount = async () => Number(await psql(database.url, "SELECT count(*) FROM api_keys"))

/** polls `gateway` with `key` until it is refused; how long that took */
const refusedWithin = async (gateway: RunningGateway, key: ApiKey, timeoutMs: number) => {
  const { value, elapsedMs } = await pollUntil(() => infer(gateway, key), (answer) => answer.status !== 200, timeoutMs)
  expect(value.status, value.text).toBe(401)
  return { body: value.body, elapsedMs }
}

describe("gateway --create-api-key", () => {
  it("prints one line on stdout, the key, exits 0, and stores only the SHA-256 of its secret", async () => {
    const result = await runGateway(["--create-api-key"], { env: relationalEnv() })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^sk-gw-[a-z0-9]{12}-[A-Za-z0-9]{48}\n$/)
    const key = parseKey(result.stdout.trim())
    expect(result.stderr).not.toContain(key.secret)

    const [row] = JSON.parse(await psql(
      database.url,
      `SELECT json_agg(json_build_object('hash', encode(secret_hash, 'hex'), 'row', to_jsonb(k)::text)) FROM api_keys k WHERE public_id = '${key.publicId}'`
    ))
    expect(row.hash).toBe(createHash("sha256").update(key.secret).digest("hex"))
    expect(row.row).not.toContain(key.secret)
  })

  it("makes a different key each time", async () => {
    const [a, b] = await Promise.all([createKey(database.url), createKey(database.url)])
    expect(a.publicId).not.toBe(b.publicId)
    expect(a.secret).not.toBe(b.secret)
  })

  it("a new key works at once on every authenticated endpoint, the OpenAI SDK included", async () => {
    const key = await createKey(database.url)
    const inference = await call(first, "POST", "/inference", {
      key,
      body: { function_name: "chat", input: { messages: [{ role: "user", content: "Hello" }] } }
    })
    expect(inference.status, inference.text).toBe(200)
    const id = inference.body.inference_id
    const authed = withKey(first, key)
    await waitForInference(authed, id)

    const feedback = await call(first, "POST", "/feedback", { key, body: { metric_name: "comment", inference_id: id, value: "fine" } })
    expect(feedback.status, feedback.text).toBe(200)
    await waitForFeedback(authed, id, (rows) => rows.length === 1)

    const got = await call(first, "POST", "/v1/inferences/get_inferences", { key, body: { ids: [id] } })
    expect(got.status, got.text).toBe(200)
    expect(got.body.inferences.map((row: any) => row.inference_id)).toEqual([id])
    const listed = await call(first, "POST", "/v1/inferences/list_inferences", { key, body: { function_name: "chat" } })
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.inferences.map((row: any) => row.inference_id)).toContain(id)

    const client = sdk(first, key)
    const completion = await client.chat.completions.create({
      model: "gateway::function_name::chat",
      messages: [{ role: "user", content: "Hello" }]
    })
    expect(completion.choices[0].message.content).toBe("Hello from the dummy provider. This answer is always the same.")
    const models = await client.models.list()
    expect(models.data.map((model) => model.id)).toContain("gateway::function_name::chat")
  })
})

describe("gateway --disable-api-key", () => {
  it("exits 0, and the key is refused within cache_ttl_ms by two processes that served it a moment before", async () => {
    const key = await createKey(database.url)
    // both processes verify (and cache) the key
    for (const gateway of [first, second]) {
      expect((await infer(gateway, key)).status).toBe(200)
      expect((await sdk(gateway, key).models.list()).data.length).toBeGreaterThan(0)
    }
    const result = await runGateway(["--disable-api-key", key.publicId], { env: relationalEnv() })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain(key.publicId)

    // cache_ttl_ms is 1 s: polling for 2 s leaves room for a slow machine, not for a longer cache
    const [onFirst, onSecond] = await Promise.all([refusedWithin(first, key, 2_000), refusedWithin(second, key, 2_000)])
    for (const refused of [onFirst, onSecond]) {
      expect(refused.body).toEqual({ error: `API key ${key.publicId} is disabled` })
    }
    // the OpenAI endpoint refuses it as well, in its shape
    const error = await sdk(second, key).models.list().then(() => undefined, (caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError)
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).message).toContain(`API key ${key.publicId} is disabled`)
  })

  it("with cache_ttl_ms = 0 the very next request after the command is refused", async () => {
    const key = await createKey(database.url)
    expect((await infer(uncached, key)).status).toBe(200)
    const result = await runGateway(["--disable-api-key", key.publicId], { env: relationalEnv() })
    expect(result.code, result.stderr).toBe(0)
    const next = await infer(uncached, key)
    expect(next.status).toBe(401)
    expect(next.body).toEqual({ error: `API key ${key.publicId} is disabled` })
  })

  it("disabling an already disabled key exits 0; an unknown or malformed public id exits 1 with a message", async () => {
    const key = await createKey(database.url)
    for (let i = 0; i < 2; i++) {
      const result = await runGateway(["--disable-api-key", key.publicId], { env: relationalEnv() })
      expect(result.code, result.stderr).toBe(0)
    }
    const unknown = await runGateway(["--disable-api-key", "zzzzzzzzzzzz"], { env: relationalEnv() })
    expect(unknown.code).toBe(1)
    expect(unknown.stdout).toBe("")
    expect(unknown.stderr).toContain("no API key has the public id zzzzzzzzzzzz")
    const malformed = await runGateway(["--disable-api-key", "not-an-id"], { env: relationalEnv() })
    expect(malformed.code).toBe(1)
    expect(malformed.stderr).toContain(`"not-an-id" is not a public id`)
  })
})

describe("gateway api-key create | disable", () => {
  it("do what the flags do", async () => {
    const expiration = new Date(Date.now() + 3_600_000).toISOString()
    const created = await runGateway(["api-key", "create", "--expiration", expiration], { env: relationalEnv() })
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toMatch(/^sk-gw-[a-z0-9]{12}-[A-Za-z0-9]{48}\n$/)
    const key = parseKey(created.stdout.trim())
    const stored = await psql(database.url, `SELECT (extract(epoch FROM expires_at) * 1000)::bigint FROM api_keys WHERE public_id = '${key.publicId}'`)
    expect(Number(stored)).toBe(Date.parse(expiration))
    expect((await infer(uncached, key)).status).toBe(200)

    const disabled = await runGateway(["api-key", "disable", key.publicId], { env: relationalEnv() })
    expect(disabled.code, disabled.stderr).toBe(0)
    expect((await infer(uncached, key)).body).toEqual({ error: `API key ${key.publicId} is disabled` })

    const unknown = await runGateway(["api-key", "disable", "zzzzzzzzzzzz"], { env: relationalEnv() })
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("no API key has the public id zzzzzzzzzzzz")
  })
})

describe("--admin", () => {
  it("gives the new key the admin role (existing and plain keys have none), and goes with --create-api-key only", async () => {
    const roleOf = (publicId: string) => psql(database.url, `SELECT admin FROM api_keys WHERE public_id = '${publicId}'`)
    for (const args of [["--create-api-key", "--admin"], ["api-key", "create", "--admin"]]) {
      const created = await runGateway(args, { env: relationalEnv() })
      expect(created.code, created.stderr).toBe(0)
      expect(await roleOf(parseKey(created.stdout.trim()).publicId)).toBe("t")
    }
    const plain = await runGateway(["--create-api-key"], { env: relationalEnv() })
    expect(await roleOf(parseKey(plain.stdout.trim()).publicId)).toBe("f")
    const before = await keyCount()
    const alone = await runGateway(["--admin"], { env: relationalEnv() })
    expect(alone.code).toBe(2)
    expect(alone.stderr).toContain("--admin goes with --create-api-key")
    expect(await keyCount()).toBe(before)
  })
})

describe("--expiration", () => {
  it("refuses a time in the past or a malformed one with exit 1 and a message, storing no key", async () => {
    const before = await keyCount()
    const cases: Array<[ReadonlyArray<string>, string]> = [
      [["--create-api-key", "--expiration", "2020-01-01T00:00:00Z"], "is in the past"],
      [["api-key", "create", "--expiration", new Date(Date.now() - 5_000).toISOString()], "is in the past"],
      [["--create-api-key", "--expiration", "tomorrow"], "expected a UTC timestamp"],
      [["--create-api-key", "--expiration", "2030-13-45T99:00:00Z"], "expected a UTC timestamp"],
      [["--create-api-key", "--expiration", "2030-01-01"], "expected a UTC timestamp"],
      [["--create-api-key", "--expiration", "2030-02-30T00:00:00Z"], "expected a UTC timestamp"],
      [["api-key", "create", "--expiration", ""], "expected a UTC timestamp"]
    ]
    const results = await Promise.all(cases.map(([args]) => runGateway(args, { env: relationalEnv() })))
    results.forEach((result, index) => {
      const [args, message] = cases[index]
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(1)
      expect(result.stdout, args.join(" ")).toBe("")
      expect(result.stderr, args.join(" ")).toContain("--expiration")
      expect(result.stderr, args.join(" ")).toContain(message)
    })
    expect(await keyCount()).toBe(before)
  })

  it("a key that expires a few seconds ahead works until then, and is refused as expired from then on", async () => {
    const expiresAt = Math.ceil((Date.now() + 2_500) / 1000) * 1000
    const expiration = new Date(expiresAt).toISOString().replace(".000Z", "Z")
    const key = await createKey(database.url, ["--expiration", expiration])
    expect((await infer(first, key)).status).toBe(200)
    expect((await sdk(second, key).models.list()).data.length).toBeGreaterThan(0)

    const { body } = await refusedWithin(first, key, 6_000)
    const refusedAt = Date.now()
    expect(refusedAt).toBeGreaterThanOrEqual(expiresAt)
    // an expiration is checked on every request, cached keys included
    expect(refusedAt - expiresAt).toBeLessThan(1_000)
    expect(body).toEqual({ error: `API key ${key.publicId} expired at ${new Date(expiresAt).toISOString()}` })
    const error = await sdk(second, key).models.list().then(() => undefined, (caught: unknown) => caught)
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError)
    expect((error as Error).message).toContain("expired at")
  })
})

describe("the key commands' command line", () => {
  it("keeps stdout to the key alone with JSON logs too", async () => {
    for (const args of [["--create-api-key", "--log-format", "json"], ["api-key", "create", "--log-format", "json"]]) {
      const result = await runGateway(args, { env: relationalEnv() })
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout, args.join(" ")).toMatch(/^sk-gw-[a-z0-9]{12}-[A-Za-z0-9]{48}\n$/)
    }
  })

  it("refuses --create-api-key with --disable-api-key, and --expiration with --disable-api-key, doing neither half", async () => {
    const key = await createKey(database.url)
    const before = await keyCount()
    for (const args of [
      ["--create-api-key", "--disable-api-key", key.publicId],
      ["--disable-api-key", key.publicId, "--expiration", "2099-01-01T00:00:00Z"]
    ]) {
      const result = await runGateway(args, { env: relationalEnv() })
      expect(result.code, args.join(" ")).toBe(2)
      expect(result.stdout, args.join(" ")).toBe("")
      expect(result.stderr, args.join(" ")).toMatch(/exclude each other|--expiration goes with --create-api-key/)
    }
    expect(await keyCount()).toBe(before)
    expect((await infer(uncached, key)).status).toBe(200)
  })
})

describe("without a relational database", () => {
  it("every key command exits 1 with a message naming the variable", async () => {
    const commands = [
      ["--create-api-key"],
      ["--create-api-key", "--expiration", "2099-01-01T00:00:00Z"],
      ["--disable-api-key", "abcdefabcdef"],
      ["api-key", "create"],
      ["api-key", "disable", "abcdefabcdef"]
    ]
    const results = await Promise.all(commands.map((args) => runGateway(args, { env: { GATEWAY_RELATIONAL_DB_URL: undefined } })))
    results.forEach((result, index) => {
      expect(result.code, commands[index].join(" ")).toBe(1)
      expect(result.stdout).toBe("")
      expect(result.stderr, commands[index].join(" ")).toContain("GATEWAY_RELATIONAL_DB_URL")
      expect(result.stdout).not.toMatch(keyPattern)
    })
  })

  it("with a database that does not answer, every key command exits 1 naming the variable and the cause", async () => {
    const url = `postgres://postgres@127.0.0.1:${await closedPort()}/nothing`
    const commands = [["--create-api-key"], ["--disable-api-key", "abcdefabcdef"], ["api-key", "create"]]
    const results = await Promise.all(commands.map((args) => runGateway(args, { env: { GATEWAY_RELATIONAL_DB_URL: url } })))
    results.forEach((result, index) => {
      expect(result.code, commands[index].join(" ")).toBe(1)
      expect(result.stdout).toBe("")
      expect(result.stderr).toContain("GATEWAY_RELATIONAL_DB_URL")
      expect(result.stderr).toContain("ECONNREFUSED")
    })
  })
})
