/**
 * Hardening of the web UI's session (issue 33): the session cookie held the admin API key
 * itself, so signing out revoked nothing. Now it holds a random session id whose hash lives in
 * the relational database. Over real HTTP, with two gateway processes on one real Postgres (and
 * a third whose sessions last 3 s): a session made on one gateway works on the other; signing
 * out, and disabling the session's key (from the UI's route or the command line), refuse the
 * cookie at once on both, although the gateways trust a verified key for 2 s; the cookie is not
 * the key nor anything derived from it; a cookie holding a raw key (as before the upgrade) is
 * refused; an ended session is refused everywhere; the CSRF token is bound to its session;
 * guessed session ids count as failed authentications of the client's address; and while the
 * database does not answer, a session is neither let in nor (silently) signed out.
 */
import { createHash, createHmac, randomBytes } from "node:crypto"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, type ApiKey, call, createKey, disableKey, dummyInference, parseKey, pollUntil } from "../support/access.ts"
import { freshDatabase, queryDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

/** a verified key is trusted this long (the longest allowed): sessions must not wait for it */
const cacheTtlMs = 2_000
const failedAttemptsPerMinute = 20
const config = (sessionTtlS?: number) =>
  `[gateway.auth]\nenabled = true\ncache_ttl_ms = ${cacheTtlMs}\nmax_failed_attempts_per_minute = ${failedAttemptsPerMinute}\n` +
  (sessionTtlS === undefined ? "" : `[gateway.ui]\nsession_ttl_s = ${sessionTtlS}\n`)


/** a browser's session: its two cookies as the gateway set them */
interface Session {
  readonly id: string
  readonly csrf: string
  readonly maxAge: number
  /** the Cookie header a browser sends back */
  readonly cookie: string
}

const cookieOf = (answer: Answer, name: string) => {
  const header = answer.headers.getSetCookie().find((line) => line.startsWith(`${name}=`))
  if (header === undefined) throw new Error(`no ${name} cookie among ${JSON.stringify(answer.headers.getSetCookie())}`)
  const [pair, ...attributes] = header.split(";").map((part) => part.trim())
  const maxAge = attributes.find((attribute) => attribute.toLowerCase().startsWith("max-age="))
  return { value: pair.slice(name.length + 1), maxAge: Number(maxAge?.split("=")[1]) }
}

const sessionFrom = (answer: Answer): Session => {
  const id = cookieOf(answer, "gateway_ui_session")
  const csrf = cookieOf(answer, "gateway_ui_csrf")
  return { id: id.value, csrf: csrf.value, maxAge: id.maxAge, cookie: `gateway_ui_session=${id.value}; gateway_ui_csrf=${csrf.value}` }
}

const signIn = async (gateway: RunningGateway, key: ApiKey, cookie?: string): Promise<Session> => {
  const answer = await call(gateway, "POST", "/v1/ui/session", { body: { api_key: key.key }, headers: cookie === undefined ? {} : { cookie } })
  expect(answer.status, JSON.stringify(answer.body)).toBe(200)
  expect(answer.body).toEqual({ authentication: true, signed_in: true, public_id: key.publicId, workspace: "default", role: "admin" })
  return sessionFrom(answer)
}

/** a read of an admin route on the session */
const read = (gateway: RunningGateway, session: Session | string) =>
  call(gateway, "GET", "/v1/ui/api_keys", { headers: { cookie: typeof session === "string" ? session : session.cookie } })

/** a change (a new key) on the session, with its CSRF token unless another is given */
const change = (gateway: RunningGateway, session: Session, csrf = session.csrf) =>
  call(gateway, "POST", "/v1/ui/api_keys", { headers: { cookie: session.cookie, "x-gateway-csrf": csrf }, body: {} })

const sessionState = async (gateway: RunningGateway, cookie: string) => (await call(gateway, "GET", "/v1/ui/session", { headers: { cookie } })).body

const ended = "the UI's session has ended (signed out, expired, or unknown): sign in again"

const sha256 = (text: string) => createHash("sha256").update(text).digest()

let database: TestDatabase
/** two gateways on one database, as two hosts behind a load balancer */
let first: RunningGateway
let second: RunningGateway
/** a third, whose sessions last 3 s, reaching the database through a proxy that can cut it off */
let brief: RunningGateway
let proxy: TcpProxy
let admin: ApiKey

beforeAll(async () => {
  database = await freshDatabase("postgres")
  admin = await createKey(database.url, ["--admin"])
  const env = { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: undefined }
  // one after the other: the first applies the migrations
  first = await startGateway({ config: config(), env })
  second = await startGateway({ config: config(), env })
  const server = new URL(database.url)
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) })
  brief = await startGateway({ config: config(3), env: { ...env, GATEWAY_RELATIONAL_DB_URL: proxy.urlFor(database.url) } })
}, 60_000)
afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop(), brief?.stop()])
  await proxy?.close()
  await database?.drop()
})

/** a new admin key, made on the UI's route with the admin's bearer key */
const newAdminKey = async (): Promise<ApiKey> => {
  const created = await call(first, "POST", "/v1/ui/api_keys", { headers: { authorization: `Bearer ${admin.key}` }, body: { admin: true } })
  expect(created.status).toBe(200)
  return parseKey(created.body.api_key)
}

describe("the UI's session", () => {
  it("is a random id, neither the key nor derived from it; only its hash is stored", async () => {
    const one = await signIn(first, admin)
    const two = await signIn(first, admin)
    // 32 random bytes each time, for the same key
    expect(one.id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(one.id).not.toBe(two.id)
    expect(one.maxAge).toBe(12 * 60 * 60)
    for (const session of [one, two]) {
      for (const value of [session.id, session.csrf]) {
        expect(value).not.toContain(admin.secret)
        expect(value).not.toContain(admin.publicId)
        for (const derived of [sha256(admin.key), sha256(admin.secret)]) {
          expect(value).not.toBe(derived.toString("base64url"))
          expect(value).not.toBe(derived.toString("hex"))
        }
      }
    }
    // the database holds the hash of the id, not the id
    const rows = await queryDatabase(database, "SELECT encode(id_hash, 'hex') AS id_hash, public_id FROM ui_sessions")
    expect(rows).toEqual(expect.arrayContaining([
      { id_hash: sha256(one.id).toString("hex"), public_id: admin.publicId },
      { id_hash: sha256(two.id).toString("hex"), public_id: admin.publicId }
    ]))
    expect(JSON.stringify(await queryDatabase(database, "SELECT * FROM ui_sessions"))).not.toContain(one.id)
    // both live until signed out
    expect((await read(first, one)).status).toBe(200)
    expect((await read(first, two)).status).toBe(200)
  })

  it("made on one gateway, works on the other, for reads and (with its CSRF token) changes", async () => {
    const session = await signIn(first, admin)
    expect(await sessionState(second, session.cookie)).toEqual({ authentication: true, signed_in: true, public_id: admin.publicId, workspace: "default", role: "admin" })
    expect((await read(second, session)).status).toBe(200)
    const created = await change(second, session)
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    expect(created.body.api_key).toMatch(/^sk-gw-/)
  })

  it("signed out on one gateway, is refused at once on both; the key itself keeps working", async () => {
    const session = await signIn(second, admin)
    expect((await read(first, session)).status).toBe(200)
    expect((await read(second, session)).status).toBe(200)
    const signOut = await call(second, "DELETE", "/v1/ui/session", { headers: { cookie: session.cookie } })
    expect(signOut.status).toBe(200)
    expect(signOut.headers.getSetCookie().filter((line) => /Max-Age=0/i.test(line))).toHaveLength(2)
    // no waiting: the very next requests, on either gateway
    for (const gateway of [first, second]) {
      const refused = await read(gateway, session)
      expect(refused.status).toBe(401)
      expect(refused.body.error).toBe(ended)
      expect((await change(gateway, session)).status).toBe(401)
      expect(await sessionState(gateway, session.cookie)).toEqual({ authentication: true, signed_in: false })
    }
    expect(await queryDatabase(database, `SELECT 1 FROM ui_sessions WHERE id_hash = '\\x${sha256(session.id).toString("hex")}'`)).toEqual([])
    expect((await call(first, "GET", "/v1/ui/api_keys", { headers: { authorization: `Bearer ${admin.key}` } })).status).toBe(200)
  })

  it("of a key disabled on the UI's route, is refused at once on both gateways, within the key cache's lifetime", async () => {
    const key = await newAdminKey()
    const [onFirst, onSecond] = [await signIn(first, key), await signIn(second, key)]
    // both gateways now trust the key for 2 s
    expect((await read(first, onFirst)).status).toBe(200)
    expect((await read(second, onSecond)).status).toBe(200)
    // disabled by another admin, from the UI on the second gateway
    const mine = await signIn(second, admin)
    const disabled = await call(second, "POST", `/v1/ui/api_keys/${key.publicId}/disable`, {
      headers: { cookie: mine.cookie, "x-gateway-csrf": mine.csrf }
    })
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200)
    for (const gateway of [first, second]) {
      for (const session of [onFirst, onSecond]) {
        const refused = await read(gateway, session)
        expect(refused.status).toBe(401)
        expect(refused.body.error).toBe(`API key ${key.publicId} is disabled`)
      }
    }
    // the next sign-in purges them
    await signIn(first, admin)
    expect(await queryDatabase(database, `SELECT 1 FROM ui_sessions WHERE public_id = '${key.publicId}'`)).toEqual([])
  })

  it("of a key disabled on the command line, is refused at once on both gateways", async () => {
    const key = await newAdminKey()
    const session = await signIn(first, key)
    expect((await read(second, session)).status).toBe(200)
    await disableKey(database.url, key.publicId)
    for (const gateway of [first, second]) {
      const refused = await read(gateway, session)
      expect(refused.status).toBe(401)
      expect(refused.body.error).toBe(`API key ${key.publicId} is disabled`)
      expect(await sessionState(gateway, session.cookie)).toEqual({ authentication: true, signed_in: false })
    }
  })

  it("refuses a cookie that holds the key itself, as before the upgrade", async () => {
    // the cookies a browser signed in before the upgrade still sends: the key, and a random CSRF token
    const csrf = randomBytes(24).toString("base64url")
    const cookie = `gateway_ui_session=${admin.key}; gateway_ui_csrf=${csrf}`
    for (const gateway of [first, second]) {
      const refused = await read(gateway, cookie)
      expect(refused.status).toBe(401)
      expect(refused.body.error).toBe("the UI's session cookie is not a session of this gateway: sign in again")
      expect(JSON.stringify(refused.body)).not.toContain(admin.secret)
      const forged = await call(gateway, "POST", "/v1/ui/api_keys", { headers: { cookie, "x-gateway-csrf": csrf }, body: {} })
      expect(forged.status).toBe(403)
      expect(await sessionState(gateway, cookie)).toEqual({ authentication: true, signed_in: false })
    }
    // signing in replaces it
    const session = await signIn(first, admin, cookie)
    expect((await read(first, session)).status).toBe(200)
  })

  it("signing in again ends the session this browser held", async () => {
    const before = await signIn(first, admin)
    const after = await signIn(second, admin, before.cookie)
    expect((await read(first, before)).status).toBe(401)
    expect((await read(first, after)).status).toBe(200)
  })

  it("ends when its lifetime (session_ttl_s) is over, on every gateway, and is purged", async () => {
    const session = await signIn(brief, admin)
    expect(session.maxAge).toBe(3)
    const signedInAt = Date.now()
    expect((await read(brief, session)).status).toBe(200)
    // the end is the database's: the gateways whose own sessions last 12 h refuse it too
    const refused = await pollUntil(() => read(first, session), (answer) => answer.status === 401, 10_000)
    expect(Date.now() - signedInAt).toBeGreaterThanOrEqual(2_000)
    expect(refused.value.body.error).toBe(ended)
    expect((await read(brief, session)).body.error).toBe(ended)
    expect((await read(second, session)).status).toBe(401)
    // the next sign-in purges it
    await signIn(second, admin)
    expect(await queryDatabase(database, `SELECT 1 FROM ui_sessions WHERE id_hash = '\\x${sha256(session.id).toString("hex")}'`)).toEqual([])
  })

  it("binds the CSRF token to the session: another session's token, or a planted one, changes nothing", async () => {
    const [one, two] = [await signIn(first, admin), await signIn(first, admin)]
    const otherToken = await change(first, one, two.csrf)
    expect(otherToken.status).toBe(403)
    expect(otherToken.body.error).toContain("CSRF token")
    // a CSRF cookie set by a neighbouring origin, sent back in the header: not the session's token
    const planted = "p".repeat(43)
    const withPlanted = await call(first, "POST", "/v1/ui/api_keys", {
      headers: { cookie: `gateway_ui_session=${one.id}; gateway_ui_csrf=${planted}`, "x-gateway-csrf": planted },
      body: {}
    })
    expect(withPlanted.status).toBe(403)
    // the token is the HMAC of a fixed text keyed by the session id: nothing of the key's
    expect(one.csrf).toBe(createHmac("sha256", one.id).update("gateway_ui_csrf").digest("base64url"))
    expect((await change(first, one)).status).toBe(200)
  })

  it("counts guessed session ids against the client's address, which then gets 429s", async () => {
    // from an address of its own (127.0.0.9), so that the other tests' refusals do not count
    const guess = () =>
      new Promise<number>((resolve, reject) => {
        const request = http.request(`${first.url}/v1/ui/api_keys`, {
          headers: { cookie: `gateway_ui_session=${randomBytes(32).toString("base64url")}` },
          localAddress: "127.0.0.9",
          agent: false
        }, (response) => {
          response.resume()
          response.on("end", () => resolve(response.statusCode ?? 0))
        })
        request.on("error", reject)
        request.end()
      })
    const statuses: Array<number> = []
    for (let i = 0; i < failedAttemptsPerMinute + 3; i++) statuses.push(await guess())
    expect(statuses.slice(0, failedAttemptsPerMinute)).toEqual(Array(failedAttemptsPerMinute).fill(401))
    expect(statuses.slice(failedAttemptsPerMinute)).toEqual([429, 429, 429])
    // the gateway keeps answering everyone else
    expect((await read(first, await signIn(first, admin))).status).toBe(200)
    expect((await call(first, "POST", "/inference", { headers: { authorization: `Bearer ${admin.key}` }, body: dummyInference() })).status).toBe(200)
  })

  it("is not let in, nor signed out, while the database does not answer: 503s, and the session lives on", async () => {
    const session = await signIn(first, admin)
    expect((await read(brief, session)).status).toBe(200)
    proxy.cut()
    try {
      const refused = await read(brief, session)
      expect(refused.status).toBe(503)
      expect(refused.body.error).toContain("cannot check the UI's session: the relational database is unavailable")
      const signOut = await call(brief, "DELETE", "/v1/ui/session", { headers: { cookie: session.cookie } })
      expect(signOut.status).toBe(503)
      expect(signOut.body.error).toContain("cannot end the UI's session")
      // the cookies stay, so that signing out can be tried again
      expect(signOut.headers.getSetCookie()).toEqual([])
    } finally {
      proxy.restore()
    }
    // not ended: it still works elsewhere, and signing out again ends it everywhere
    expect((await read(first, session)).status).toBe(200)
    await pollUntil(() => call(brief, "DELETE", "/v1/ui/session", { headers: { cookie: session.cookie } }), (answer) => answer.status === 200, 10_000)
    expect((await read(first, session)).status).toBe(401)
    expect((await read(brief, session)).status).toBe(401)
  })
})
