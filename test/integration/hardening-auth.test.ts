/**
 * Hardening of authentication (issue 10): a flood of well-formed guessed keys
 * (`sk-gw-<12 chars>-<secret>`) must neither reach the database once per guess nor push valid
 * keys out of the key cache. Over HTTP, with the real Postgres behind a recording TCP proxy, so
 * that the test counts the key lookups that reached the database (each one carries the public id
 * it looks up). The clients connect from loopback addresses of their own (127.0.0.x), which the
 * gateway sees as different client addresses.
 *
 * The cache's separation of unknown ids from keys found is checked on the lookup itself (a
 * flood of 10 000 unknown ids within one cache lifetime is a matter of speed over HTTP).
 */
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { generateApiKey } from "../../src/auth/apiKey.ts"
import { cachedKeyLookup } from "../../src/auth/keyCache.ts"
import type { ApiKeyStore, StoredApiKey } from "../../src/auth/store.ts"
import { type ApiKey, createKeys, dummyInference, pollUntil } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const limit = 20
/** how long a key is cached (the longest allowed) */
const cacheTtlMs = 2_000

const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const randomText = (length: number, letters: string) =>
  Array.from(randomBytes(length), (byte) => letters[byte % letters.length]).join("")
/** a well-formed key nobody made */
const guessedKey = () => `sk-gw-${randomText(12, alphabet.slice(0, 36))}-${randomText(48, alphabet)}`
const publicIdOf = (key: string) => key.slice(6, 18)

interface Answer {
  readonly status: number
  readonly retryAfter: string | undefined
  readonly body: any
  readonly text: string
}

/** one request from the client address `from` (a loopback address), with `Authorization: Bearer <key>` when a key is given */
const send = (
  gateway: RunningGateway,
  from: string,
  key: string | undefined,
  route: "/inference" | "/openai/v1/models" = "/inference"
) =>
  new Promise<Answer>((resolve, reject) => {
    const post = route === "/inference"
    const headers: Record<string, string> = post ? { "content-type": "application/json" } : {}
    if (key !== undefined) headers.authorization = `Bearer ${key}`
    const request = http.request(`${gateway.url}${route}`, { method: post ? "POST" : "GET", headers, localAddress: from, agent: false }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (data: string) => (text += data))
      response.on("end", () => {
        const retryAfter = response.headers["retry-after"]
        resolve({ status: response.statusCode ?? 0, retryAfter: typeof retryAfter === "string" ? retryAfter : undefined, body: JSON.parse(text), text })
      })
    })
    request.on("error", reject)
    request.end(post ? JSON.stringify(dummyInference()) : undefined)
  })

const countOf = (statuses: ReadonlyArray<number>, status: number) => statuses.filter((value) => value === status).length

let database: TestDatabase
let proxy: TcpProxy
let gateway: RunningGateway
let keys: Array<ApiKey>

beforeAll(async () => {
  database = await freshDatabase("postgres")
  const server = new URL(database.url)
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) }, { record: true })
  keys = await createKeys(database.url, 4)
  gateway = await startGateway({
    config: `[gateway.auth]\nenabled = true\ncache_ttl_ms = ${cacheTtlMs}\nmax_failed_attempts_per_minute = ${limit}\n`,
    env: { GATEWAY_RELATIONAL_DB_URL: proxy.urlFor(database.url), GATEWAY_ANALYTICS_DB_URL: undefined }
  })
})
afterAll(async () => {
  await gateway?.stop()
  await proxy?.close()
  await database?.drop()
})

/** how many queries the gateway sent for this public id (each lookup carries it once) */
const lookups = (publicId: string) => proxy.sent().split(publicId).length - 1

describe(`failed authentications, at most ${limit} a minute per client address`, () => {
  it("a flood of 200 guessed keys: 401s, then 429s before the database; the lookups stop at the limit; valid keys keep working", async () => {
    const from = "127.0.0.2"
    const [valid, unseen] = keys
    expect((await send(gateway, from, valid.key)).status).toBe(200)
    const validLookups = lookups(valid.publicId)
    expect(validLookups).toBe(1)

    const started = Date.now()
    const guesses = Array.from({ length: 200 }, guessedKey)
    const answers = await Promise.all(guesses.map((key) => send(gateway, from, key)))
    const elapsedS = (Date.now() - started) / 1000
    const statuses = answers.map((answer) => answer.status)
    expect(countOf(statuses, 401) + countOf(statuses, 429)).toBe(200)
    // the limit, and what refilled during the flood (one every 3 s)
    const allowed = limit + Math.ceil(elapsedS / 3)
    expect(countOf(statuses, 401)).toBeGreaterThanOrEqual(limit)
    expect(countOf(statuses, 401)).toBeLessThanOrEqual(allowed)
    // the database saw one lookup per 401, none for the 429s
    const looked = guesses.filter((key) => lookups(publicIdOf(key)) > 0).length
    expect(looked).toBe(countOf(statuses, 401))
    for (const answer of answers.filter((answer) => answer.status === 429)) {
      expect(answer.retryAfter).toMatch(/^[1-9]\d*$/)
      expect(answer.body).toEqual({ error: `too many failed authentications from this address (at most ${limit} a minute): retry in ${answer.retryAfter} s` })
    }

    // a valid key the gateway knows still answers from the throttled address, without a lookup while cached
    expect((await send(gateway, from, valid.key)).status).toBe(200)
    const since = (Date.now() - started) / cacheTtlMs
    expect(lookups(valid.publicId)).toBeLessThanOrEqual(validLookups + Math.ceil(since))
    // its public id with another secret gets the same 429 as an unknown key: nothing tells that it exists
    const wrongSecret = await send(gateway, from, `sk-gw-${valid.publicId}-${randomText(48, alphabet)}`)
    expect(wrongSecret.status).toBe(429)
    expect(wrongSecret.body.error).toMatch(/^too many failed authentications from this address/)
    // a valid key the gateway has not seen waits like the guesses from there; from another address it passes, and then from there too
    expect((await send(gateway, from, unseen.key)).status).toBe(429)
    expect((await send(gateway, "127.0.0.3", unseen.key)).status).toBe(200)
    expect((await send(gateway, from, unseen.key)).status).toBe(200)
    // a missing or malformed header costs the database nothing: still the 401 that says what is wrong
    const missing = await send(gateway, from, undefined)
    expect(missing.status).toBe(401)
    expect(missing.body.error).toContain("missing API key")
    expect((await send(gateway, from, "sk-gw-short")).status).toBe(401)
    // OpenAI's shape under /openai/v1
    const openAi = await send(gateway, from, guessedKey(), "/openai/v1/models")
    expect(openAi.status).toBe(429)
    expect(openAi.body.error.type).toBe("rate_limit_error")
    // other addresses have attempts of their own
    expect((await send(gateway, "127.0.0.3", guessedKey())).status).toBe(401)

    // the attempts refill continuously: one every 3 s, then a 429 again
    const refilled = await pollUntil(() => send(gateway, from, guessedKey()), (answer) => answer.status === 401, 10_000)
    expect(refilled.value.body.error).toBe("unknown API key")
    expect((await send(gateway, from, guessedKey())).status).toBe(429)
  }, 30_000)

  it("successes take nothing: many calls with a valid key, then the address still has all its attempts", async () => {
    const from = "127.0.0.4"
    const [, , valid] = keys
    const calls = await Promise.all(Array.from({ length: 3 * limit }, () => send(gateway, from, valid.key)))
    expect(calls.every((answer) => answer.status === 200)).toBe(true)
    const statuses: Array<number> = []
    for (let i = 0; i < limit + 1; i++) statuses.push((await send(gateway, from, guessedKey())).status)
    expect(statuses.slice(0, limit)).toEqual(Array(limit).fill(401))
    expect(statuses[limit]).toBe(429)
  })

  it("a wrong secret for a real key counts as a failure too", async () => {
    const from = "127.0.0.5"
    const [, , , valid] = keys
    const statuses: Array<number> = []
    for (let i = 0; i < limit + 1; i++) statuses.push((await send(gateway, from, `sk-gw-${valid.publicId}-${randomText(48, alphabet)}`)).status)
    expect(statuses.slice(0, limit)).toEqual(Array(limit).fill(401))
    expect(statuses[limit]).toBe(429)
    // the key itself still passes from there
    expect((await send(gateway, from, valid.key)).status).toBe(200)
  })
})

describe("max_failed_attempts_per_minute = 0", () => {
  it("does not limit failed attempts", async () => {
    const unlimited = await startGateway({
      config: `[gateway.auth]\nenabled = true\nmax_failed_attempts_per_minute = 0\n`,
      env: { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: undefined }
    })
    try {
      const answers = await Promise.all(Array.from({ length: 150 }, () => send(unlimited, "127.0.0.6", guessedKey())))
      expect(answers.every((answer) => answer.status === 401)).toBe(true)
      expect(unlimited.log()).toContain("failed attempts not limited")
    } finally {
      await unlimited.stop()
    }
  })
})

describe("the key cache", () => {
  it("keeps the keys found apart from unknown ids: 20 000 unknown ids push out none of them", async () => {
    const made = Array.from({ length: 3 }, () => generateApiKey())
    const stored = new Map<string, StoredApiKey>(
      made.map((key) => [key.publicId, { publicId: key.publicId, secretHash: key.secretHash, createdAt: Date.now(), admin: false, workspace: "default", global: false, issuer: "gateway" }])
    )
    const asked: Array<string> = []
    const store: ApiKeyStore = {
      create: () => Effect.void,
      disable: () => Effect.succeed(false),
      list: () => Effect.succeed([]),
      workspaces: () => Effect.succeed(["default"]),
      importKeys: () => Effect.die("not imported here"),
      find: (publicId) => Effect.sync(() => (asked.push(publicId), stored.get(publicId)))
    }
    const lookup = cachedKeyLookup(store, 60_000, Date.now)
    const find = (publicId: string) => Effect.runPromise(lookup.find(publicId))
    for (const key of made) expect((await find(key.publicId))?.publicId).toBe(key.publicId)
    for (let i = 0; i < 20_000; i++) await find(`unknown${String(i).padStart(5, "0")}`)
    expect(asked).toHaveLength(3 + 20_000)
    for (const key of made) expect(lookup.cached(key.publicId)?.key?.publicId).toBe(key.publicId)
    // unknown ids are cached too, the newest of them
    expect(lookup.cached("unknown19999")).toEqual({ key: undefined })
    expect(lookup.cached("unknown00000")).toBeUndefined()
  })

  it("asks the store once for concurrent lookups of one id", async () => {
    let queries = 0
    const store: ApiKeyStore = {
      create: () => Effect.void,
      disable: () => Effect.succeed(false),
      list: () => Effect.succeed([]),
      workspaces: () => Effect.succeed(["default"]),
      importKeys: () => Effect.die("not imported here"),
      find: () => Effect.as(Effect.sleep(50), (queries++, undefined))
    }
    const lookup = cachedKeyLookup(store, 0, Date.now)
    await Effect.runPromise(Effect.all(Array.from({ length: 20 }, () => lookup.find("abcdefabcdef")), { concurrency: "unbounded" }))
    expect(queries).toBe(1)
  })
})
