/**
 * GCP service accounts: the JSON key file exchanged for an OAuth2 access token (the JWT bearer
 * grant, RFC 7523), for the providers served on Vertex AI (`gcp_vertex_anthropic`,
 * `gcp_vertex_gemini`). The JWT is signed with `jose` (RS256); the token is fetched through the
 * `HttpTransport` from the key file's own `token_uri` (google-auth-library hard-codes Google's
 * token URL, so a test or a proxy could not stand in for it), kept per provider and credential,
 * and fetched again five minutes before it expires. Concurrent calls share one fetch.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import { InvalidRequest } from "../../errors.ts"
import { HttpTransport } from "../../transport.ts"
import type { Authorizer } from "../codec.ts"
import { quoted } from "../../untrusted.ts"
import { ProviderFailure } from "../failure.ts"

export const cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
export const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"
const defaultTokenUri = "https://oauth2.googleapis.com/token"

/** a token is fetched again this long before it expires */
const refreshMarginMs = 5 * 60 * 1000
/** the lifetime asked of the signed assertion (Google's maximum) */
const assertionLifetimeSeconds = 3600

/** The fields of a service account key file that the token exchange uses. */
export interface ServiceAccount {
  readonly clientEmail: string
  readonly privateKey: string
  readonly privateKeyId: string | undefined
  readonly tokenUri: string
  readonly projectId: string | undefined
}

const fail = (message: string, timedOut = false) => new ProviderFailure({ message, timedOut })

/** A service account key file's JSON, read; the problem otherwise (never quoting the key). */
export const parseServiceAccount = (text: string): ServiceAccount | string => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return "the GCP credential is not JSON (a service account key file is expected)"
  }
  if (typeof json !== "object" || json === null) return "the GCP credential is not a JSON object (a service account key file is expected)"
  const record = json as Record<string, unknown>
  const { client_email, private_key, private_key_id, token_uri, project_id } = record
  if (typeof client_email !== "string") return "the GCP service account key file has no client_email"
  if (typeof private_key !== "string") return "the GCP service account key file has no private_key"
  return {
    clientEmail: client_email,
    privateKey: private_key,
    privateKeyId: typeof private_key_id === "string" ? private_key_id : undefined,
    tokenUri: typeof token_uri === "string" ? token_uri : defaultTokenUri,
    projectId: typeof project_id === "string" ? project_id : undefined
  }
}

/** The signed assertion of the JWT bearer grant. */
const signedAssertion = (account: ServiceAccount, nowMs: number): Effect.Effect<string, ProviderFailure> =>
  Effect.tryPromise({
    try: async () => {
      // loaded on the first assertion rather than at every start (25 ms)
      const { importPKCS8, SignJWT } = await import("jose")
      const key = await importPKCS8(account.privateKey, "RS256")
      const iat = Math.floor(nowMs / 1000)
      return new SignJWT({ scope: cloudPlatformScope })
        .setProtectedHeader(
          account.privateKeyId === undefined ? { alg: "RS256", typ: "JWT" } : { alg: "RS256", typ: "JWT", kid: account.privateKeyId }
        )
        .setIssuer(account.clientEmail)
        .setAudience(account.tokenUri)
        .setIssuedAt(iat)
        .setExpirationTime(iat + assertionLifetimeSeconds)
        .sign(key)
    },
    catch: () => fail("the GCP service account's private_key could not sign a token request (not a PKCS#8 RSA key)")
  })

interface AccessToken {
  readonly token: string
  /** epoch milliseconds after which it is fetched again */
  readonly refreshAtMs: number
}

/** The token endpoint's answer: `{access_token, expires_in}`, or an OAuth error. */
const readTokenReply = (status: number, text: string, tokenUri: string, nowMs: number): Result.Result<AccessToken, ProviderFailure> => {
  let json: Record<string, unknown> | undefined
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null) json = parsed as Record<string, unknown>
  } catch {
    json = undefined
  }
  if (status < 200 || status >= 300) {
    const reason = json === undefined
      ? text.slice(0, 200)
      : [json.error, json.error_description].filter((part) => typeof part === "string").join(": ")
    return Result.fail(fail(`the GCP token endpoint ${tokenUri} refused the service account (credentials refused): HTTP ${status}: ${reason}`))
  }
  const token = json?.access_token
  if (typeof token !== "string") return Result.fail(fail(`the GCP token endpoint ${tokenUri} answered without an access_token`))
  const expiresIn = typeof json?.expires_in === "number" ? json.expires_in : assertionLifetimeSeconds
  return Result.succeed({ token, refreshAtMs: nowMs + Math.max(0, expiresIn * 1000 - refreshMarginMs) })
}

const fetchToken = (credential: string): Effect.Effect<AccessToken, ProviderFailure, HttpTransport> =>
  Effect.gen(function*() {
    const account = parseServiceAccount(credential)
    if (typeof account === "string") return yield* Effect.fail(fail(account))
    const nowMs = yield* Clock.currentTimeMillis
    const assertion = yield* signedAssertion(account, nowMs)
    const http = yield* HttpTransport
    const reply = yield* http.post({
      url: account.tokenUri,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: jwtBearerGrant, assertion }).toString()
    }).pipe(Effect.mapError((error) => fail(`the GCP token endpoint ${account.tokenUri}: ${error.message}`, error.timedOut)))
    return yield* Effect.fromResult(readTokenReply(reply.status, reply.text, account.tokenUri, nowMs))
  })

/**
 * An access token source for one provider: tokens kept by credential (a dynamic credential may
 * name several service accounts), one fetch at a time per credential.
 */
export const makeAccessTokens = () => {
  const tokens = new Map<string, AccessToken>()
  const fetching = new Map<string, Deferred.Deferred<AccessToken, ProviderFailure>>()
  return (credential: string): Effect.Effect<string, ProviderFailure, HttpTransport> =>
    Effect.gen(function*() {
      const nowMs = yield* Clock.currentTimeMillis
      const kept = tokens.get(credential)
      if (kept !== undefined && nowMs < kept.refreshAtMs) return kept.token
      const pending = fetching.get(credential)
      if (pending !== undefined) return (yield* Deferred.await(pending)).token
      const deferred = Deferred.makeUnsafe<AccessToken, ProviderFailure>()
      fetching.set(credential, deferred)
      const fetched = yield* fetchToken(credential).pipe(
        Effect.onExit((exit) => {
          fetching.delete(credential)
          if (Exit.isSuccess(exit)) tokens.set(credential, exit.value)
          // an interrupted fetch (its caller went away) fails the calls waiting on it rather than interrupting them
          return Deferred.done(
            deferred,
            Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)
              ? Exit.fail(fail("the GCP access token fetch was interrupted; try again"))
              : exit
          )
        })
      )
      return fetched.token
    })
}

/**
 * The authorizer of a Vertex provider: the call's credential is a service account key file's
 * JSON; the request goes with `Authorization: Bearer <access token>`.
 */
export const makeServiceAccountAuthorizer = (): Authorizer => {
  const accessToken = makeAccessTokens()
  return (request, credential, fromRequest) => {
    if (credential === undefined) {
      return Effect.fail(fail("no GCP service account credential for this provider (a service account key file's JSON is expected)"))
    }
    const refused = fromRequest === true ? requestTokenEndpointProblem(credential) : undefined
    if (refused !== undefined) return Effect.fail(refused)
    return Effect.map(accessToken(credential), (token) => ({
      ...request,
      headers: { ...request.headers, authorization: `Bearer ${token}` }
    }))
  }
}

/**
 * A key file a request gave (`dynamic::`) must not make the gateway POST to an address of the
 * caller's choosing: its `token_uri` may only be Google's. The request's fault, a 400. Parsed
 * at every call of such a credential (about 10 µs), never for the operator's.
 */
const requestTokenEndpointProblem = (credential: string): InvalidRequest | undefined => {
  const account = parseServiceAccount(credential)
  if (typeof account === "string" || account.tokenUri === defaultTokenUri) return undefined
  return new InvalidRequest({
    message: `credentials: the GCP service account key file given with the request names the token endpoint ${
      quoted(account.tokenUri, 200)
    }; one given with a request may only use ${defaultTokenUri}`
  })
}
