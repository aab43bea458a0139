/**
 * `[gateway.ui.oidc]`: single sign-on for the web UI (src/auth/oidcRules.ts). Checked at
 * start-up, each problem naming its key: URLs that parse (https, or http to a loopback address,
 * for a provider on the same machine), a client secret that can be read, `openid` among the
 * scopes, and rules that each name one way to match, a workspace name and a role. Without rules
 * nobody could sign in, which is refused too: it is surely a mistake.
 */
import type { OidcMatch, OidcRule, OidcSettings } from "../auth/oidcRules.ts"
import { workspaceNameProblem } from "../workspace.ts"
import type { BuildContext } from "./context.ts"
import { parseSingleLocation, resolveCredential } from "./credentials.ts"
import type { RawGateway } from "./raw.ts"

type RawOidc = NonNullable<NonNullable<RawGateway["ui"]>["oidc"]>

export const defaultOidcScopes = "openid email profile"

const secretLocations = `"env::NAME", "path::FILE" or "path_from_env::NAME"`

const loopbackHosts = new Set(["localhost", "127.0.0.1", "[::1]"])

/** why `text` is not a URL the gateway may send a browser or a secret to, or undefined */
export const oidcUrlProblem = (text: string): string | undefined => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return `expected an absolute URL, got "${text}"`
  }
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && loopbackHosts.has(url.hostname)) return undefined
  return `expected an https:// URL (http:// only to localhost or 127.0.0.1), got "${text}"`
}

const ruleOf = (context: BuildContext, raw: NonNullable<RawOidc["rules"]>[number], keyPath: ReadonlyArray<string | number>): OidcRule | undefined => {
  let problems = 0
  const report = (key: string, message: string) => {
    problems++
    context.report([...keyPath, key], message)
  }
  if (raw.claim.trim() === "") report("claim", "expected the name of a claim of the ID token or userinfo (email, groups, ...)")
  let match: OidcMatch | undefined
  if (raw.value !== undefined && raw.email_domain !== undefined) {
    report("email_domain", "a rule matches either `value` or `email_domain`, not both")
  } else if (raw.value !== undefined) {
    match = { kind: "value", value: raw.value }
  } else if (raw.email_domain !== undefined) {
    const domain = raw.email_domain.replace(/^@/, "")
    if (!/^[A-Za-z0-9.-]+\.[A-Za-z0-9-]+$/.test(domain)) report("email_domain", `expected a domain such as "acme.com", got "${raw.email_domain}"`)
    else match = { kind: "email_domain", domain }
  } else {
    report("value", "a rule needs `value` (the claim's value, or one of its values) or `email_domain`")
  }
  const workspaceProblem = workspaceNameProblem(raw.workspace, "workspace")
  if (workspaceProblem !== undefined) report("workspace", workspaceProblem)
  if (problems > 0 || match === undefined) return undefined
  return { claim: raw.claim, match, workspace: raw.workspace, role: raw.role }
}

export const buildUiOidc = (context: BuildContext, raw: RawOidc | undefined, authEnabled: boolean): OidcSettings | undefined => {
  if (raw === undefined) return undefined
  const keyPath = ["gateway", "ui", "oidc"]
  // without authentication the UI is open to everyone: signing in would grant nothing, and say otherwise
  if (!authEnabled) context.report(keyPath, "single sign-on needs [gateway.auth] enabled = true (without it the UI is open and has no sessions)")
  for (const [key, value] of [["issuer_url", raw.issuer_url], ["redirect_url", raw.redirect_url]] as const) {
    const problem = oidcUrlProblem(value)
    if (problem !== undefined) context.report([...keyPath, key], problem)
  }
  if (raw.client_id.trim() === "") context.report([...keyPath, "client_id"], "expected the client id registered at the identity provider")
  const location = parseSingleLocation(raw.client_secret_location)
  let clientSecret = resolveCredential({ kind: "none" }, context.input)
  if (location === undefined || !(location.kind === "env" || location.kind === "path" || location.kind === "path_from_env")) {
    context.report([...keyPath, "client_secret_location"], `expected ${secretLocations}, got "${raw.client_secret_location}"`)
  } else {
    clientSecret = resolveCredential(location, context.input)
    if (clientSecret.kind === "missing") context.report([...keyPath, "client_secret_location"], clientSecret.what)
  }
  const scopes = (raw.scopes ?? defaultOidcScopes).split(/\s+/).filter((scope) => scope !== "")
  if (!scopes.includes("openid")) context.report([...keyPath, "scopes"], `expected "openid" among the scopes (OpenID Connect needs it), got "${raw.scopes}"`)
  const written = raw.rules ?? []
  if (written.length === 0) {
    context.report([...keyPath, "rules"], "expected at least one [[gateway.ui.oidc.rules]]: an identity no rule maps is refused, so without rules nobody could sign in")
  }
  const rules = written.flatMap((rule, index) => ruleOf(context, rule, [...keyPath, "rules", index]) ?? [])
  return {
    issuerUrl: raw.issuer_url,
    clientId: raw.client_id,
    clientSecret,
    redirectUrl: raw.redirect_url,
    scopes: scopes.join(" "),
    rules
  }
}
