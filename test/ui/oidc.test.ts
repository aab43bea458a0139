/**
 * Single sign-on for the UI (`[gateway.ui.oidc]`) against a real, certified OpenID Connect
 * provider (`oidc-provider`, on a local port, its development login and consent pages), driven
 * in Chromium, the gateway on Postgres: alice@acme.com signs in as an admin of workspace acme
 * and creates a key there (recorded as hers in the audit log); bob (group readers) signs in as a
 * viewer and is refused a write; eve@other.com is refused by the rules, with an audit entry; a
 * replayed state and a callback without the binding cookie are refused; an expired session
 * sends the browser back to the sign-in page; after signing out, the old cookie is refused.
 *
 * The provider answers at `localhost`, the gateway at `127.0.0.1`: two sites, so that the
 * callback is the cross-site navigation it is in production (the binding cookie must be Lax,
 * the session's Strict cookies must be set by a page of the gateway's own).
 */
import { execFile } from "node:child_process"
import * as http from "node:http"
import { promisify } from "node:util"
import * as net from "node:net"
import type { AddressInfo } from "node:net"
import Provider from "oidc-provider"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, screenshot, watchedPage } from "../support/browser.ts"
import { freshDatabase, type TestDatabase } from "../support/databases.ts"
import { runGateway, type RunningGateway, startGateway } from "../support/gateway.ts"

/** runs a statement on the test's database (what an operator's psql would) */
const psql = (database: TestDatabase, statement: string) => {
  const url = new URL(database.url)
  return promisify(execFile)("psql", ["-h", url.hostname, "-p", url.port || "5432", "-U", url.username || "postgres", "-d", database.name, "-v", "ON_ERROR_STOP=1", "-c", statement])
}

const clientId = "gateway-ui"
const clientSecret = "a-test-client-secret-of-the-gateway-ui-0123456789"

const accounts: Record<string, Record<string, unknown>> = {
  alice: { email: "alice@acme.com", email_verified: true, name: "Alice" },
  bob: { email: "bob@elsewhere.org", email_verified: true, groups: ["readers"] },
  eve: { email: "eve@other.com", email_verified: true, groups: ["outsiders"] }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

/** the identity provider: one static client, the accounts above (any password), PKCE required */
const startProvider = async (redirectUrl: string) => {
  let handler: http.RequestListener = (_request, response) => response.end()
  const server = http.createServer((request, response) => handler(request, response))
  // both loopback addresses: Chromium and Node may reach `localhost` by either
  await new Promise<void>((resolve) => server.listen(0, "::", resolve))
  const issuer = `http://localhost:${(server.address() as AddressInfo).port}`
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic"
    }],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"], groups: ["groups"] },
    scopes: ["openid", "email", "profile", "groups"],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ["a-cookie-key-of-the-test-provider"] },
    findAccount: (_context: unknown, id: string) =>
      accounts[id] === undefined ? undefined : { accountId: id, claims: () => ({ sub: id, ...accounts[id] }) }
  })
  handler = provider.callback()
  return { issuer, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

const signInPage = (page: Page) => page.getByRole("heading", { level: 1, name: "Sign in to the gateway" })

/** through the provider's login and consent pages as `login` (from the gateway's sign-in page) */
const signInAtProvider = async (page: Page, login: string) => {
  await page.getByRole("link", { name: "Sign in with SSO" }).click()
  await page.locator("input[name=login]").fill(login)
  await page.locator("input[name=password]").fill("any password")
  await page.getByRole("button", { name: "Sign-in" }).click()
  await page.getByRole("button", { name: "Continue" }).click()
}

describe("single sign-on for the UI", () => {
  let browser: Browser
  let database: TestDatabase
  let gateway: RunningGateway
  let provider: Awaited<ReturnType<typeof startProvider>>
  let globalKey: string

  beforeAll(async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    provider = await startProvider(`${url}/v1/ui/oidc/callback`)
    database = await freshDatabase("postgres")
    const env = { GATEWAY_RELATIONAL_DB_URL: database.url, GATEWAY_ANALYTICS_DB_URL: database.url, GATEWAY_TEST_OIDC_SECRET: clientSecret }
    const config = `
[gateway.auth]
enabled = true

[gateway.ui.oidc]
issuer_url = "${provider.issuer}"
client_id = "${clientId}"
client_secret_location = "env::GATEWAY_TEST_OIDC_SECRET"
redirect_url = "${url}/v1/ui/oidc/callback"
scopes = "openid email profile groups"

[[gateway.ui.oidc.rules]]
claim = "email"
email_domain = "acme.com"
workspace = "acme"
role = "admin"

[[gateway.ui.oidc.rules]]
claim = "groups"
value = "readers"
workspace = "acme"
role = "viewer"
`
    ;[gateway, browser] = await Promise.all([
      startGateway({ config, env: { ...env, GATEWAY_BIND_ADDRESS: `127.0.0.1:${port}` }, startTimeoutMs: 60_000 }),
      launchBrowser()
    ])
    const created = await runGateway(["--create-api-key", "--admin", "--global"], { env, timeoutMs: 60_000 })
    if (created.code !== 0) throw new Error(created.stderr)
    globalKey = created.stdout.trim()
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await gateway?.stop()
    await provider?.stop()
    await database?.drop()
  })

  const audit = async (query: string) => {
    const response = await fetch(`${gateway.url}/v1/audit?${query}`, { headers: { authorization: `Bearer ${globalKey}` } })
    expect(response.status).toBe(200)
    return ((await response.json()) as any).entries as Array<any>
  }

  it("signs an admin in: it acts in its rule's workspace, as itself in the audit log; signing out ends the session everywhere", async () => {
    const { page, context, problems } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.url}/ui/api-keys`)
      await signInPage(page).waitFor()
      await screenshot(page, "sign-in-sso-desktop")
      await signInAtProvider(page, "alice")
      // back to the page the sign-in started from
      await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
      expect(new URL(page.url()).pathname).toBe("/ui/api-keys")
      expect(await page.locator(".session").textContent()).toContain("alice@acme.com (admin)")
      const cookies = await context.cookies(gateway.url)
      const session = cookies.find((cookie) => cookie.name === "gateway_ui_session")!
      expect(session).toMatchObject({ httpOnly: true, sameSite: "Strict" })
      expect(cookies.find((cookie) => cookie.name === "gateway_oidc_binding")).toBeUndefined()
      expect(await fetch(`${gateway.url}/v1/ui/session`, { headers: { cookie: `gateway_ui_session=${session.value}` } }).then((r) => r.json()))
        .toEqual({ authentication: true, signed_in: true, oidc: true, identity: "alice@acme.com", workspace: "acme", role: "admin" })

      // a key created in the UI is workspace acme's, and the audit log names alice
      await page.getByRole("button", { name: "Create key" }).click()
      const newKey = await page.getByLabel("New API key").inputValue()
      const newId = /^sk-gw-([a-z0-9]{12})-/.exec(newKey)![1]
      // the newest entry: no one else creates keys here
      const [created] = await audit("action=api_key.create")
      expect(created).toMatchObject({ actor_kind: "oidc", actor: "alice@acme.com", workspace: "acme", outcome: "success" })
      const listed = await fetch(`${gateway.url}/v1/ui/api_keys`, { headers: { authorization: `Bearer ${globalKey}`, "gateway-workspace": "acme" } })
        .then((r) => r.json()) as any
      expect(listed.api_keys.map((key: any) => key.public_id)).toContain(newId)
      // another workspace is not hers
      const foreign = await page.evaluate(`fetch("/v1/ui/api_keys", { headers: { "gateway-workspace": "default" } }).then((r) => r.status)`)
      expect(foreign).toBe(403)
      problems.splice(0)

      const signIns = await audit("action=ui.sign_in")
      expect(signIns.find((entry) => entry.actor === "alice@acme.com")).toMatchObject({ actor_kind: "oidc", workspace: "acme", outcome: "success" })

      // signing out: the sign-in page, and the old cookie refused from then on
      await page.getByRole("button", { name: "Sign out" }).click()
      await signInPage(page).waitFor()
      const after = await fetch(`${gateway.url}/v1/ui/api_keys`, { headers: { cookie: `gateway_ui_session=${session.value}` } })
      expect(after.status).toBe(401)
      expect((await audit("action=ui.sign_out"))[0]).toMatchObject({ actor_kind: "oidc", actor: "alice@acme.com", workspace: "acme" })
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 90_000)

  it("signs a viewer in, who reads (searches by POST too) but is refused a write", async () => {
    const { page, context, problems, forget } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.url}/ui/api-keys`)
      await signInPage(page).waitFor()
      await signInAtProvider(page, "bob")
      await page.getByRole("heading", { level: 1, name: "API keys" }).waitFor()
      expect(await page.locator(".session").textContent()).toContain("bob@elsewhere.org (viewer)")
      await page.getByRole("button", { name: "Create key" }).click()
      const refusal = page.getByRole("alert").filter({ hasText: "403" })
      await refusal.waitFor()
      expect(await refusal.textContent()).toBe(
        `403: bob@elsewhere.org signed in as a viewer of workspace "acme": a viewer may read, not change anything`
      )
      await screenshot(page, "sso-viewer-refused-desktop")
      forget()
      // a search the API makes by POST only reads: the viewer's inferences page is served
      const listed = page.waitForResponse((response) => response.url().endsWith("/v1/inferences/list_inferences"))
      await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Inferences" }).click()
      expect((await listed).status()).toBe(200)
      await page.getByRole("heading", { level: 1, name: "Inferences" }).waitFor()
      expect(problems).toEqual([])
    } finally {
      await context.close()
    }
  }, 90_000)

  it("refuses an identity no rule maps, with a page saying why and an audit entry", async () => {
    const { page, context } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.url}/ui/`)
      await signInPage(page).waitFor()
      await signInAtProvider(page, "eve")
      await page.getByRole("heading", { level: 1, name: "Sign-in refused" }).waitFor()
      expect(await page.locator("body").textContent()).toContain(
        "eve@other.com is not allowed to use this gateway's UI: no [[gateway.ui.oidc.rules]] maps this identity"
      )
      expect((await context.cookies(gateway.url)).find((cookie) => cookie.name === "gateway_ui_session")).toBeUndefined()
      const refused = (await audit("action=ui.sign_in")).find((entry) => entry.actor === "eve@other.com")
      expect(refused).toMatchObject({ actor_kind: "oidc", outcome: "failure", status: 403, details: { reason: "unmapped", subject: "eve" } })
    } finally {
      await context.close()
    }
  }, 90_000)

  it("refuses a callback without the browser's binding cookie, and a state used before", async () => {
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      let callback: string | undefined
      page.on("request", (request) => {
        if (request.url().includes("/v1/ui/oidc/callback")) callback = request.url()
      })
      await page.goto(`${gateway.url}/ui/`)
      await signInPage(page).waitFor()
      await page.getByRole("link", { name: "Sign in with SSO" }).click()
      await page.locator("input[name=login]").fill("alice")
      await page.locator("input[name=password]").fill("any password")
      await page.getByRole("button", { name: "Sign-in" }).click()
      // the browser loses its binding cookie (as another browser, handed the redirect, would not have it): refused
      await context.clearCookies({ name: "gateway_oidc_binding" })
      await page.getByRole("button", { name: "Continue" }).click()
      await page.getByRole("heading", { level: 1, name: "Sign-in refused" }).waitFor()
      expect(await page.locator("body").textContent()).toContain("this sign-in was not started by this browser")
      expect(callback).toContain("code=")

      // the state is spent: the same callback again is refused too
      const replayed = await page.goto(callback!)
      expect(replayed!.status()).toBe(400)
      expect(await replayed!.text()).toContain("this sign-in is unknown, already used, or older than 10 minutes")
      const reasons = (await audit("action=ui.sign_in")).map((entry) => entry.details?.reason)
      expect(reasons).toEqual(expect.arrayContaining(["binding_mismatch", "unknown_state"]))
    } finally {
      await context.close()
    }
  }, 90_000)

  it("sends the browser back to the sign-in page when its session has expired", async () => {
    const { page, context, forget } = await watchedPage(browser)
    try {
      await page.goto(`${gateway.url}/ui/`)
      await signInPage(page).waitFor()
      await signInAtProvider(page, "alice")
      await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
      await psql(database, "UPDATE ui_sessions SET expires_at = now() WHERE oidc_email = 'alice@acme.com'")
      await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "API keys" }).click()
      await signInPage(page).waitFor()
      forget()
    } finally {
      await context.close()
    }
  }, 90_000)
})
