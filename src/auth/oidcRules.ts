/**
 * Single sign-on for the web UI (`[gateway.ui.oidc]`): the settings, and the rules that map an
 * identity the OpenID Connect provider vouched for (its claims) to a workspace and a role. Pure:
 * the sign-in itself is layers/http/uiOidc.ts. The rules are tried first to last and the first
 * that matches decides; an identity no rule maps is refused, so that signing in at the company's
 * identity provider never grants anything the configuration did not name.
 */
import type { Credential } from "../config/credentials.ts"

/** what a session of a single sign-on identity may do in its workspace: everything, or only read */
export type OidcRole = "admin" | "viewer"

/** `claim` holds `value` (a string, or a list containing it), or is an email address at `emailDomain` */
export type OidcMatch =
  | { readonly kind: "value"; readonly value: string }
  | { readonly kind: "email_domain"; readonly domain: string }

export interface OidcRule {
  readonly claim: string
  readonly match: OidcMatch
  readonly workspace: string
  readonly role: OidcRole
}

export interface OidcSettings {
  readonly issuerUrl: string
  readonly clientId: string
  readonly clientSecret: Credential
  readonly redirectUrl: string
  /** space-separated, `openid` among them */
  readonly scopes: string
  readonly rules: ReadonlyArray<OidcRule>
}

/** who signed in, as a session keeps it: the provider's subject, the email when it gave one, and what the rule granted */
export interface OidcIdentity {
  readonly subject: string
  readonly email?: string | undefined
  readonly workspace: string
  readonly role: OidcRole
}

/** how the audit log and the UI name an identity: its email, else its subject */
export const identityName = (identity: { readonly subject: string; readonly email?: string | undefined }): string => identity.email ?? identity.subject

const valuesOf = (claim: unknown): ReadonlyArray<string> => {
  if (typeof claim === "string") return [claim]
  if (typeof claim === "number" || typeof claim === "boolean") return [String(claim)]
  if (Array.isArray(claim)) return claim.flatMap((item) => typeof item === "string" ? [item] : [])
  return []
}

const matches = (rule: OidcRule, claims: Readonly<Record<string, unknown>>): boolean => {
  const values = valuesOf(claims[rule.claim])
  if (rule.match.kind === "value") return values.includes(rule.match.value)
  // an address the provider says it has not verified proves nothing about its domain
  if (rule.claim === "email" && claims.email_verified === false) return false
  const suffix = `@${rule.match.domain.toLowerCase()}`
  return values.some((value) => value.toLowerCase().endsWith(suffix))
}

/** the claims the rules read: whether the ID token lacks one of them decides whether to ask the userinfo endpoint */
export const claimsRead = (rules: ReadonlyArray<OidcRule>): ReadonlyArray<string> => [...new Set(rules.map((rule) => rule.claim))]

/** the identity `claims` make under `rules` (the first that matches), or undefined when none maps it */
export const mapIdentity = (rules: ReadonlyArray<OidcRule>, claims: Readonly<Record<string, unknown>>): OidcIdentity | undefined => {
  const subject = claims.sub
  if (typeof subject !== "string" || subject === "") return undefined
  const rule = rules.find((candidate) => matches(candidate, claims))
  if (rule === undefined) return undefined
  const email = typeof claims.email === "string" && claims.email !== "" ? claims.email : undefined
  return { subject, email, workspace: rule.workspace, role: rule.role }
}
