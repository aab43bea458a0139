/**
 * Single sign-on for the UI: `[gateway.ui.oidc]` at start-up (each problem named by its key path)
 * and the rules that map an identity's claims to a workspace and a role (first match wins; none
 * is a refusal); where a sign-in may send the browser back to (the UI's paths only).
 */
import { describe, expect, it } from "vitest"
import { mapIdentity, type OidcRule } from "../../src/auth/oidcRules.ts"
import { safeReturnTo } from "../../layers/http/uiOidc.ts"
import { buildErrors, buildOk } from "./fixtures.ts"

const env = { OIDC_SECRET: "s3cret" }

const oidc = (table: string, rules = `
[[gateway.ui.oidc.rules]]
claim = "email"
email_domain = "acme.com"
workspace = "acme"
role = "admin"
`, auth = true) => `
${auth ? "[gateway.auth]\nenabled = true\n" : ""}
[gateway.ui.oidc]
${table}
${rules}`

const valid = `issuer_url = "https://id.example.com"
client_id = "gateway"
client_secret_location = "env::OIDC_SECRET"
redirect_url = "https://gateway.example.com/v1/ui/oidc/callback"`

describe("[gateway.ui.oidc]", () => {
  it("builds the settings: the secret read, the default scopes, the rules in order", () => {
    const settings = buildOk(oidc(valid), { env }).gateway.ui.oidc
    expect(settings).toEqual({
      issuerUrl: "https://id.example.com",
      clientId: "gateway",
      clientSecret: { kind: "static", value: "s3cret" },
      redirectUrl: "https://gateway.example.com/v1/ui/oidc/callback",
      scopes: "openid email profile",
      rules: [{ claim: "email", match: { kind: "email_domain", domain: "acme.com" }, workspace: "acme", role: "admin" }]
    })
    expect(buildOk("", {}).gateway.ui.oidc).toBeUndefined()
  })

  it("names each wrong field", () => {
    const errors = buildErrors(oidc(`issuer_url = "http://id.example.com"
client_id = ""
client_secret_location = "dynamic::secret"
redirect_url = "not a url"
scopes = "email profile"`, `
[[gateway.ui.oidc.rules]]
claim = "groups"
workspace = "team b"
role = "admin"

[[gateway.ui.oidc.rules]]
claim = "email"
value = "a@b.c"
email_domain = "b.c"
workspace = "acme"
role = "viewer"
`), { env })
    expect(errors).toEqual([
      expect.stringMatching(/gateway\.ui\.oidc\.issuer_url: expected an https:\/\/ URL \(http:\/\/ only to localhost or 127\.0\.0\.1\), got "http:\/\/id\.example\.com"/),
      expect.stringMatching(/gateway\.ui\.oidc\.redirect_url: expected an absolute URL, got "not a url"/),
      expect.stringMatching(/gateway\.ui\.oidc\.client_id: expected the client id registered at the identity provider/),
      expect.stringMatching(/gateway\.ui\.oidc\.client_secret_location: expected "env::NAME", "path::FILE" or "path_from_env::NAME", got "dynamic::secret"/),
      expect.stringMatching(/gateway\.ui\.oidc\.scopes: expected "openid" among the scopes/),
      expect.stringMatching(/gateway\.ui\.oidc\.rules\[0\]\.value: a rule needs `value`/),
      expect.stringMatching(/gateway\.ui\.oidc\.rules\[0\]\.workspace: workspace: "team b" is not a workspace name/),
      expect.stringMatching(/gateway\.ui\.oidc\.rules\[1\]\.email_domain: a rule matches either `value` or `email_domain`, not both/)
    ])
  })

  it("refuses a secret that is not there, a role that is not one, and no rules at all", () => {
    expect(buildErrors(oidc(valid), {}).join("\n")).toMatch(/gateway\.ui\.oidc\.client_secret_location: environment variable OIDC_SECRET is not set/)
    expect(buildErrors(oidc(valid, `
[[gateway.ui.oidc.rules]]
claim = "email"
email_domain = "acme.com"
workspace = "acme"
role = "owner"
`), { env }).join("\n")).toMatch(/gateway\.ui\.oidc\.rules\[0\]\.role/)
    expect(buildErrors(oidc(valid, ""), { env }).join("\n")).toMatch(/gateway\.ui\.oidc\.rules: expected at least one \[\[gateway\.ui\.oidc\.rules\]\]/)
  })

  it("needs authentication on", () => {
    expect(buildErrors(oidc(valid, undefined, false), { env })).toEqual([
      expect.stringMatching(/gateway\.ui\.oidc: single sign-on needs \[gateway\.auth\] enabled = true/)
    ])
  })

  it("takes an http:// identity provider on this machine", () => {
    const local = valid.replace("https://id.example.com", "http://127.0.0.1:8080")
    expect(buildOk(oidc(local), { env }).gateway.ui.oidc?.issuerUrl).toBe("http://127.0.0.1:8080")
  })
})

describe("the single sign-on rules", () => {
  const rules: ReadonlyArray<OidcRule> = [
    { claim: "groups", match: { kind: "value", value: "gateway-admins" }, workspace: "platform", role: "admin" },
    { claim: "email", match: { kind: "email_domain", domain: "acme.com" }, workspace: "acme", role: "admin" },
    { claim: "groups", match: { kind: "value", value: "readers" }, workspace: "acme", role: "viewer" }
  ]

  it("maps by the first rule that matches", () => {
    expect(mapIdentity(rules, { sub: "1", email: "alice@acme.com" })).toEqual({ subject: "1", email: "alice@acme.com", workspace: "acme", role: "admin" })
    // in both groups: the first rule wins
    expect(mapIdentity(rules, { sub: "2", email: "carol@acme.com", groups: ["readers", "gateway-admins"] })).toMatchObject({ workspace: "platform", role: "admin" })
    expect(mapIdentity(rules, { sub: "3", groups: ["readers"] })).toEqual({ subject: "3", email: undefined, workspace: "acme", role: "viewer" })
    // a claim holding one value, not a list
    expect(mapIdentity(rules, { sub: "4", groups: "readers" })).toMatchObject({ role: "viewer" })
  })

  it("refuses an identity no rule maps, and one without a subject", () => {
    expect(mapIdentity(rules, { sub: "5", email: "eve@other.com", groups: ["outsiders"] })).toBeUndefined()
    // a domain is matched whole: not a suffix of another domain
    expect(mapIdentity(rules, { sub: "6", email: "mallory@notacme.com" })).toBeUndefined()
    expect(mapIdentity(rules, { sub: "7", email: "mallory@acme.com.evil.org" })).toBeUndefined()
    expect(mapIdentity(rules, { email: "alice@acme.com" })).toBeUndefined()
  })

  it("does not take an email address the provider has not verified as proof of its domain", () => {
    expect(mapIdentity(rules, { sub: "8", email: "alice@acme.com", email_verified: false })).toBeUndefined()
    expect(mapIdentity(rules, { sub: "8", email: "ALICE@ACME.COM", email_verified: true })).toMatchObject({ workspace: "acme" })
  })
})

describe("where a sign-in returns to", () => {
  it("a path of the UI, else the UI's home", () => {
    expect(safeReturnTo("", "/ui/api-keys?x=1")).toBe("/ui/api-keys?x=1")
    expect(safeReturnTo("/gw", "/gw/ui/datasets")).toBe("/gw/ui/datasets")
    expect(safeReturnTo("", "/ui")).toBe("/ui")
    for (const elsewhere of [null, "", "https://evil.example/ui/", "//evil.example/ui/", "/\\evil.example", "/v1/ui/api_keys", "/ui/../v1/x", "/uix"]) {
      expect(safeReturnTo("", elsewhere)).toBe("/ui/")
    }
  })
})
