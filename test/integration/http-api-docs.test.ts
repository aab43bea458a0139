/**
 * The API reference with authentication on (issue 11): `GET /openapi.json` and `GET /docs` answer
 * without a key, the document says which routes need one (the `bearer` scheme), and `/docs` is a
 * page that renders the document with no help from the internet (its script inline, no CDN, no
 * web fonts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ApiKey, call, createKey, dummyInference } from "../support/access.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { type RunningGateway, startGateway } from "../support/gateway.ts"

const config = `
[gateway.auth]
enabled = true
`

describe("the API reference with authentication on", () => {
  let database: TestDatabase
  let gateway: RunningGateway
  let key: ApiKey

  beforeAll(async () => {
    database = await freshDatabase("postgres")
    key = await createKey(database.url)
    gateway = await startGateway({ config, env: { GATEWAY_RELATIONAL_DB_URL: database.url } })
  })
  afterAll(async () => {
    await gateway?.stop()
    await database?.drop()
  })

  it("GET /openapi.json answers without a key, and marks the routes that need one", async () => {
    const answer = await call(gateway, "GET", "/openapi.json")
    expect(answer.status).toBe(200)
    const spec = answer.body
    expect(spec.components.securitySchemes).toEqual({ bearer: expect.objectContaining({ type: "http", scheme: "bearer" }) })
    // /metrics is open like /status unless [gateway.metrics] require_auth
    // and the UI's session routes (its single sign-on too), which are how the UI gets a key
    const open = ["GET /status", "GET /health", "GET /metrics", "GET /openapi.json", "GET /docs", "GET /v1/ui/session", "POST /v1/ui/session", "DELETE /v1/ui/session", "GET /v1/ui/oidc/start", "GET /v1/ui/oidc/callback"]
    for (const [path, operations] of Object.entries(spec.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        const route = `${method.toUpperCase()} ${path}`
        expect(operation.security, route).toEqual(open.includes(route) ? [] : [{ bearer: [] }])
        if (!open.includes(route)) expect(Object.keys(operation.responses), route).toContain("401")
      }
    }
    // the key is still needed where the document says so
    expect((await call(gateway, "POST", "/inference", { body: dummyInference() })).status).toBe(401)
    expect((await call(gateway, "POST", "/inference", { body: dummyInference(), key })).status).toBe(200)
  })

  it("GET /docs answers without a key: a page rendering the document, its script inline, nothing fetched from elsewhere", async () => {
    const answer = await fetch(`${gateway.url}/docs`)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toMatch(/^text\/html/)
    const page = await answer.text()
    expect(page).toMatch(/<title>LLM Gateway<\/title>/)
    // the document itself, embedded
    expect(page).toContain(`"/v1/inferences/list_inferences"`)
    expect(page).toContain(`"securitySchemes"`)
    // no script, stylesheet or font from another origin: the Scalar bundle is inline, its web fonts off
    expect(page).not.toMatch(/<script[^>]+src=/i)
    expect(page).not.toMatch(/<link[^>]+href=["']?https?:/i)
    expect(page).toContain(`"withDefaultFonts":false`)
    expect(page).toContain("window.Scalar.createApiReference")
    expect(page.length).toBeGreaterThan(1_000_000)
    // built once: the second answer is the same page
    expect(await (await fetch(`${gateway.url}/docs`)).text()).toBe(page)
  })

  it("/status and /health stay open; other paths and methods get their 404 and 405 without a key", async () => {
    expect((await call(gateway, "GET", "/status")).status).toBe(200)
    expect((await call(gateway, "GET", "/health")).status).toBe(200)
    const missing = await call(gateway, "GET", "/nowhere")
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: "no route for GET /nowhere" })
    const wrong = await call(gateway, "POST", "/docs", { body: {} })
    expect(wrong.status).toBe(405)
    expect(wrong.body).toEqual({ error: "/docs accepts GET, not POST" })
  })
})
