/**
 * The UI's API key routes (`/v1/ui/api_keys`) and its session, over HTTP with the real command
 * line on a real Postgres: list, create (the whole key answered once), disable (404 for an
 * unknown key); a created key works on /inference and stops working within the key cache's TTL
 * of being disabled; with authentication on only admin keys and admin sessions carrying their
 * CSRF token get in; the session's cookies and their attributes; with authentication off there
 * are no sessions and the routes answer without a key, and without a relational database they
 * answer a 503 saying why.
 */
import { createHash, randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, type ApiKey, call, createKey, dummyInference, keyPattern, parseKey, pollUntil, psql } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const config = (auth: boolean) => auth ? "[gateway.auth]\nenabled = true\n" : ""


const bearer = (key: ApiKey | string) => ({ authorization: `Bearer ${typeof key === "string" ? key : key.key}` })

const isoTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** a Set-Cookie header as its name, value and attributes (lower-cased names) */
const parseCookie = (header: string) => {
  const [pair, ...attributes] = header.split(";").map((part) => part.trim())
  const at = pair.indexOf("=")
  return {
    name: pair.slice(0, at),
    value: pair.slice(at + 1),
    attributes: new Map(attributes.map((attribute) => {
      const [name, ...value] = attribute.split("=")
      return [name.toLowerCase(), value.join("=")] as const
    }))
  }
}

const cookiesOf = (answer: Answer) => new Map(answer.headers.getSetCookie().map(parseCookie).map((cookie) => [cookie.name, cookie]))

let database: TestDatabase
let secured: RunningGateway
let open: RunningGateway
let noDatabase: RunningGateway
let admin: ApiKey
let plain: ApiKey

beforeAll(async () => {
  database = await freshDatabase("postgres")
  ;[admin, plain] = [await createKey(database.url, ["--admin"]), await createKey(database.url)]
  const env = { GATEWAY_RELATIONAL_DB_URL: database.url }
  ;[secured, open, noDatabase] = await Promise.all([
    startGateway({ config: config(true), env }),
    startGateway({ config: config(false), env }),
    startGateway({ config: config(false), env: { GATEWAY_RELATIONAL_DB_URL: undefined } })
  ])
})
afterAll(async () => {
  await Promise.all([secured?.stop(), open?.stop(), noDatabase?.stop()])
  await database?.drop()
})

describe("with authentication on", () => {
  it("lists the keys newest first, creates one shown once, which works until it is disabled", async () => {
    const before = await call(secured, "GET", "/v1/ui/api_keys", { headers: bearer(admin) })
    expect(before.status).toBe(200)
    const listed = before.body.api_keys.map((key: any) => key.public_id)
    expect(listed).toEqual(expect.arrayContaining([admin.publicId, plain.publicId]))
    expect(before.body.api_keys.find((key: any) => key.public_id === admin.publicId)).toEqual({
      public_id: admin.publicId,
      created_at: expect.stringMatching(isoTime),
      expires_at: null,
      disabled_at: null,
      admin: true,
      workspace: "default",
      global: false,
      issuer: "gateway"
    })
    expect(JSON.stringify(before.body)).not.toContain(admin.secret)

    const expiresAt = new Date(Date.now() + 86_400_000).toISOString()
    const created = await call(secured, "POST", "/v1/ui/api_keys", { headers: bearer(admin), body: { expires_at: expiresAt } })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    expect(created.body.api_key).toMatch(keyPattern)
    const key = parseKey(created.body.api_key)
    expect(created.body).toEqual({
      api_key: key.key,
      public_id: key.publicId,
      created_at: expect.stringMatching(isoTime),
      expires_at: expiresAt,
      disabled_at: null,
      admin: false,
      workspace: "default",
      global: false,
      issuer: "gateway"
    })
    const after = await call(secured, "GET", "/v1/ui/api_keys", { headers: bearer(admin) })
    expect(after.body.api_keys[0]).toEqual({ ...created.body, api_key: undefined })
    expect(JSON.stringify(after.body)).not.toContain(key.secret)

    // the new key is a key like any other: it calls the API, and it is not an admin's
    expect((await call(secured, "POST", "/inference", { headers: bearer(key), body: dummyInference() })).status).toBe(200)
    expect((await call(secured, "GET", "/v1/ui/api_keys", { headers: bearer(key) })).status).toBe(403)

    const disabled = await call(secured, "POST", `/v1/ui/api_keys/${key.publicId}/disable`, { headers: bearer(admin) })
    expect(disabled.status).toBe(200)
    expect(disabled.body).toEqual({ ...created.body, api_key: undefined, disabled_at: expect.stringMatching(isoTime) })
    // refused once the key cache (1 s by default) lets it go
    const refused = await pollUntil(
      () => call(secured, "POST", "/inference", { headers: bearer(key), body: dummyInference() }),
      (answer) => answer.status === 401,
      5_000
    )
    expect(refused.value.body.error).toBe(`API key ${key.publicId} is disabled`)
    expect(refused.elapsedMs).toBeLessThan(2_500)
    // disabling again keeps the first time
    const again = await call(secured, "POST", `/v1/ui/api_keys/${key.publicId}/disable`, { headers: bearer(admin) })
    expect(again.body.disabled_at).toBe(disabled.body.disabled_at)
  })

  it("creates an admin key when asked, which may sign the UI in", async () => {
    const created = await call(secured, "POST", "/v1/ui/api_keys", { headers: bearer(admin), body: { admin: true } })
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({ admin: true, expires_at: null })
    const signIn = await call(secured, "POST", "/v1/ui/session", { body: { api_key: created.body.api_key } })
    expect(signIn.status).toBe(200)
    expect(signIn.body).toEqual({ authentication: true, signed_in: true, public_id: created.body.public_id, workspace: "default", role: "admin" })
  })

  it("refuses a bad expiration, an unknown field, an unknown or malformed public id", async () => {
    const headers = bearer(admin)
    const past = await call(secured, "POST", "/v1/ui/api_keys", { headers, body: { expires_at: "2020-01-01T00:00:00Z" } })
    expect(past.status).toBe(400)
    expect(past.body.error).toBe("expires_at: 2020-01-01T00:00:00Z is in the past")
    const malformed = await call(secured, "POST", "/v1/ui/api_keys", { headers, body: { expires_at: "tomorrow" } })
    expect(malformed.status).toBe(400)
    expect(malformed.body.error).toContain(`expires_at: expected a UTC timestamp`)
    const unknownField = await call(secured, "POST", "/v1/ui/api_keys", { headers, body: { role: "admin" } })
    expect(unknownField.status).toBe(400)
    expect(unknownField.body.error).toContain("role")
    const unknown = await call(secured, "POST", "/v1/ui/api_keys/zzzzzzzzzzzz/disable", { headers })
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toBe("no API key has the public id zzzzzzzzzzzz")
    const notAnId = await call(secured, "POST", "/v1/ui/api_keys/Not-An-Id/disable", { headers })
    expect(notAnId.status).toBe(400)
    expect(notAnId.body.error).toContain(`"Not-An-Id" is not a public id`)
  })

  it("refuses a key without the admin role (403) and a request without a key (401) on every route", async () => {
    for (const [method, route] of [["GET", "/v1/ui/api_keys"], ["POST", "/v1/ui/api_keys"], ["POST", `/v1/ui/api_keys/${plain.publicId}/disable`]] as const) {
      const body = method === "POST" ? {} : undefined
      const forbidden = await call(secured, method, route, { headers: bearer(plain), body })
      expect(forbidden.status, route).toBe(403)
      expect(forbidden.body.error, route).toContain(`API key ${plain.publicId} does not have the admin role`)
      expect((await call(secured, method, route, { body })).status, route).toBe(401)
    }
    // nothing was disabled on the way
    expect((await call(secured, "POST", "/inference", { headers: bearer(plain), body: dummyInference() })).status).toBe(200)
  })

  it("signs in: 401 for a wrong key, 403 for a key without the role, cookies for an admin's", async () => {
    const wrong = await call(secured, "POST", "/v1/ui/session", { body: { api_key: `sk-gw-${admin.publicId}-${"x".repeat(48)}` } })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error).toBe("unknown API key")
    expect(wrong.headers.getSetCookie()).toEqual([])
    // a form of another site can post text/plain, which signs nobody in
    const fromForm = await call(secured, "POST", "/v1/ui/session", { headers: { "content-type": "text/plain" }, body: { api_key: admin.key } })
    expect(fromForm.status).toBe(400)
    expect(fromForm.body.error).toContain("application/json")
    expect(fromForm.headers.getSetCookie()).toEqual([])
    const notAdmin = await call(secured, "POST", "/v1/ui/session", { body: { api_key: plain.key } })
    expect(notAdmin.status).toBe(403)
    expect(notAdmin.body.error).toContain("does not have the admin role")
    expect(notAdmin.headers.getSetCookie()).toEqual([])

    const signIn = await call(secured, "POST", "/v1/ui/session", { body: { api_key: admin.key } })
    expect(signIn.status).toBe(200)
    const cookies = cookiesOf(signIn)
    const session = cookies.get("gateway_ui_session")!
    const csrf = cookies.get("gateway_ui_csrf")!
    // a random session id (test/integration/hardening-sessions.test.ts), never the key
    expect(session.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(session.value).not.toContain(admin.secret)
    expect(session.attributes.has("httponly")).toBe(true)
    expect(csrf.attributes.has("httponly")).toBe(false)
    expect(csrf.value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    for (const cookie of [session, csrf]) {
      expect(cookie.attributes.get("samesite")?.toLowerCase()).toBe("strict")
      expect(cookie.attributes.get("path")).toBe("/")
      expect(cookie.attributes.has("secure")).toBe(false)
      expect(Number(cookie.attributes.get("max-age"))).toBe(12 * 60 * 60)
    }
    const overHttps = await call(secured, "POST", "/v1/ui/session", { headers: { "x-forwarded-proto": "https" }, body: { api_key: admin.key } })
    for (const cookie of cookiesOf(overHttps).values()) expect(cookie.attributes.has("secure"), cookie.name).toBe(true)

    // the session reads without the token, and changes something only with it
    const cookie = `gateway_ui_session=${session.value}; gateway_ui_csrf=${csrf.value}`
    expect((await call(secured, "GET", "/v1/ui/session", { headers: { cookie } })).body).toEqual({
      authentication: true,
      signed_in: true,
      public_id: admin.publicId,
      workspace: "default",
      role: "admin"
    })
    expect((await call(secured, "GET", "/v1/ui/api_keys", { headers: { cookie } })).status).toBe(200)
    const withoutToken = await call(secured, "POST", "/v1/ui/api_keys", { headers: { cookie }, body: {} })
    expect(withoutToken.status).toBe(403)
    expect(withoutToken.body.error).toContain("CSRF token")
    const wrongToken = await call(secured, "POST", "/v1/ui/api_keys", { headers: { cookie, "x-gateway-csrf": "x".repeat(32) }, body: {} })
    expect(wrongToken.status).toBe(403)
    const withToken = await call(secured, "POST", "/v1/ui/api_keys", { headers: { cookie, "x-gateway-csrf": csrf.value }, body: {} })
    expect(withToken.status).toBe(200)
    expect(withToken.body.api_key).toMatch(keyPattern)

    // a session of a key without the role (made by hand in the database: a key that lost the role) gets nothing
    const plainId = randomBytes(32).toString("base64url")
    await psql(database.url, `INSERT INTO ui_sessions (id_hash, public_id, expires_at)
      VALUES ('\\x${createHash("sha256").update(plainId).digest("hex")}', '${plain.publicId}', now() + interval '1 hour')`)
    const plainSession = `gateway_ui_session=${plainId}`
    expect((await call(secured, "GET", "/v1/ui/api_keys", { headers: { cookie: plainSession } })).status).toBe(403)
    expect((await call(secured, "GET", "/v1/ui/session", { headers: { cookie: plainSession } })).body.signed_in).toBe(false)

    // signing out expires both cookies
    const expired = [...cookiesOf(await call(secured, "DELETE", "/v1/ui/session", { headers: { cookie } })).values()]
    expect(expired.map((c) => c.name).sort()).toEqual(["gateway_ui_csrf", "gateway_ui_session"])
    for (const c of expired) expect(c.attributes.get("max-age")).toBe("0")
  })
})

describe("with authentication off", () => {
  it("has no sessions: signing in sets no cookie and stores nothing, and the UI's routes answer without one", async () => {
    const sessionsBefore = await psql(database.url, "SELECT count(*) FROM ui_sessions")
    const signIn = await call(open, "POST", "/v1/ui/session", { body: { api_key: admin.key } })
    expect(signIn.status).toBe(200)
    expect(signIn.body).toEqual({ authentication: false, signed_in: true, role: "global" })
    expect(signIn.headers.getSetCookie()).toEqual([])
    expect((await call(open, "GET", "/v1/ui/session")).body).toEqual({ authentication: false, signed_in: true, role: "global" })
    expect((await call(open, "GET", "/v1/ui/api_keys")).status).toBe(200)
    expect(await psql(database.url, "SELECT count(*) FROM ui_sessions")).toBe(sessionsBefore)
  })

  it("lists, creates and disables without a key; the keys are those of the same database", async () => {
    const created = await call(open, "POST", "/v1/ui/api_keys", { body: { admin: true } })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const key = parseKey(created.body.api_key)
    const listed = await call(open, "GET", "/v1/ui/api_keys")
    expect(listed.status).toBe(200)
    expect(listed.body.api_keys.map((k: any) => k.public_id)).toEqual(expect.arrayContaining([key.publicId, admin.publicId]))
    // the gateway with authentication on shares the database: the key works there
    expect((await call(secured, "GET", "/v1/ui/api_keys", { headers: bearer(key) })).status).toBe(200)
    const disabled = await call(open, "POST", `/v1/ui/api_keys/${key.publicId}/disable`)
    expect(disabled.status).toBe(200)
    expect(disabled.body.disabled_at).toMatch(isoTime)
    await pollUntil(() => call(secured, "GET", "/v1/ui/api_keys", { headers: bearer(key) }), (answer) => answer.status === 401, 5_000)
  })

  it("answers 503 naming the variable when there is no relational database", async () => {
    for (const [method, route] of [["GET", "/v1/ui/api_keys"], ["POST", "/v1/ui/api_keys"], ["POST", `/v1/ui/api_keys/${admin.publicId}/disable`]] as const) {
      const answer = await call(noDatabase, method, route, { body: method === "POST" ? {} : undefined })
      expect(answer.status, route).toBe(503)
      expect(answer.body.error, route).toBe("GATEWAY_RELATIONAL_DB_URL is not set: API keys live in Postgres; set it to a postgres:// URL")
    }
  })
})
