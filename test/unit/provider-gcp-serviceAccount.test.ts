import * as Result from "effect/Result"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { TestClock } from "effect/testing"
import { importSPKI, jwtVerify } from "jose"
import { describe, expect, it } from "vitest"
import { jwtBearerGrant, makeServiceAccountAuthorizer } from "../../src/providers/gcp/serviceAccount.ts"
import type { Credential } from "../../src/config/credentials.ts"
import type { ProviderConfig } from "../../src/config/types.ts"
import { InvalidRequest } from "../../src/errors.ts"
import { providerCall as providerCallResult } from "../../src/inference/providerCall.ts"
import { ProviderFailure } from "../../src/providers/failure.ts"
import { type HttpCall, HttpTransport } from "../../src/transport.ts"
import { serviceAccountJson, serviceAccountKeys } from "../support/serviceAccount.ts"

/** the call `providerCall` makes, or why it cannot be made */
const providerCall = <Request>(...args: Parameters<typeof providerCallResult<Request>>) => Result.merge(providerCallResult<Request>(...args))

const { privateKey, publicKey } = serviceAccountKeys()
const tokenUri = "https://token.test/token"
const account = serviceAccountJson(privateKey, { projectId: "p", keyId: "kid-1", clientEmail: "sa@p.iam.gserviceaccount.com", tokenUri })
const publicPem = publicKey.export({ type: "spki", format: "pem" }).toString()

/** A transport whose token endpoint issues `token-<n>` valid for `expiresIn` seconds, recording the assertions. */
const fakeTransport = (expiresIn: number, status = 200) => {
  const received: Array<HttpCall> = []
  const transport = HttpTransport.of({
    post: (call) =>
      Effect.sync(() => {
        received.push(call)
        return status === 200
          ? { status, text: JSON.stringify({ access_token: `token-${received.length}`, expires_in: expiresIn, token_type: "Bearer" }) }
          : { status, text: JSON.stringify({ error: "invalid_grant", error_description: "Invalid JWT Signature." }) }
      }),
    postStream: () => Effect.die("not used"),
    download: () => Effect.die("not used")
  })
  return { received, transport }
}

const request: HttpCall = { url: "https://vertex.test/x:rawPredict", headers: { "content-type": "application/json" }, body: "{}" }

describe("GCP service account authorizer", () => {
  it("signs an RS256 JWT bearer assertion, adds the token, keeps it until five minutes before expiry, then fetches again", async () => {
    const { received, transport } = fakeTransport(3600)
    const authorize = makeServiceAccountAuthorizer()
    const program = Effect.gen(function*() {
      const first = yield* authorize(request, account)
      const second = yield* authorize(request, account)
      yield* TestClock.adjust("54 minutes")
      const third = yield* authorize(request, account)
      yield* TestClock.adjust("2 minutes")
      const fourth = yield* authorize(request, account)
      return [first, second, third, fourth].map((r) => r.headers.authorization)
    })
    const tokens = await Effect.runPromise(program.pipe(Effect.provideService(HttpTransport, transport), Effect.provide(TestClock.layer())))
    expect(tokens).toEqual(["Bearer token-1", "Bearer token-1", "Bearer token-1", "Bearer token-2"])
    expect(received).toHaveLength(2)
    expect(received[0].url).toBe(tokenUri)
    expect(received[0].headers["content-type"]).toBe("application/x-www-form-urlencoded")
    const form = new URLSearchParams(received[0].body)
    expect(form.get("grant_type")).toBe(jwtBearerGrant)
    const { payload, protectedHeader } = await jwtVerify(form.get("assertion")!, await importSPKI(publicPem, "RS256"), {
      currentDate: new Date(0)
    })
    expect(protectedHeader).toMatchObject({ alg: "RS256", kid: "kid-1" })
    expect(payload).toMatchObject({
      iss: "sa@p.iam.gserviceaccount.com",
      aud: tokenUri,
      scope: "https://www.googleapis.com/auth/cloud-platform"
    })
    expect(payload.exp! - payload.iat!).toBe(3600)
  })

  it("shares one fetch between concurrent calls", async () => {
    const { received, transport } = fakeTransport(3600)
    const authorize = makeServiceAccountAuthorizer()
    const program = Effect.gen(function*() {
      const fibers = yield* Effect.forEach([1, 2, 3, 4], () => Effect.forkChild(authorize(request, account)))
      return yield* Effect.forEach(fibers, Fiber.join)
    })
    const results = await Effect.runPromise(program.pipe(Effect.provideService(HttpTransport, transport)))
    expect(results.map((r) => r.headers.authorization)).toEqual(Array(4).fill("Bearer token-1"))
    expect(received).toHaveLength(1)
  })

  it("fails naming the token endpoint's refusal, and a credential that is not a key file, without quoting it", async () => {
    const { transport } = fakeTransport(3600, 400)
    const refused = await Effect.runPromise(
      Effect.flip(makeServiceAccountAuthorizer()(request, account)).pipe(Effect.provideService(HttpTransport, transport))
    )
    expect(refused).toBeInstanceOf(ProviderFailure)
    expect(refused.message).toContain("credentials refused")
    expect(refused.message).toContain("invalid_grant: Invalid JWT Signature.")
    const notJson = await Effect.runPromise(
      Effect.flip(makeServiceAccountAuthorizer()(request, "sk-secret-text")).pipe(Effect.provideService(HttpTransport, transport))
    )
    expect(notJson.message).toContain("not JSON")
    expect(notJson.message).not.toContain("sk-secret")
  })
})

describe("a service account key file given with a request (dynamic::)", () => {
  it("may only name Google's token endpoint: anything else is the request's fault, and nothing is sent", async () => {
    const { received, transport } = fakeTransport(3600)
    const authorize = makeServiceAccountAuthorizer()
    const refused = await Effect.runPromise(Effect.flip(authorize(request, account, true)).pipe(Effect.provideService(HttpTransport, transport)))
    expect(refused).toBeInstanceOf(InvalidRequest)
    expect(refused.message).toBe(
      `credentials: the GCP service account key file given with the request names the token endpoint "${tokenUri}"; one given with a request may only use https://oauth2.googleapis.com/token`
    )
    expect(received).toHaveLength(0)
    // the operator's own key file names what it names
    const own = await Effect.runPromise(authorize(request, account, false).pipe(Effect.provideService(HttpTransport, transport)))
    expect(own.headers.authorization).toBe("Bearer token-1")
    // Google's endpoint, or none (the default), from a request
    const google = serviceAccountJson(privateKey, { projectId: "p", keyId: "k", clientEmail: "sa@p.iam.gserviceaccount.com", tokenUri: "https://oauth2.googleapis.com/token" })
    await Effect.runPromise(authorize(request, google, true).pipe(Effect.provideService(HttpTransport, transport)))
    expect(received.map((call) => call.url)).toEqual([tokenUri, "https://oauth2.googleapis.com/token"])
  })

  it("a call's credential is marked as the request's when it came from the request's credentials", () => {
    const provider = (credential: Credential): ProviderConfig => ({
      name: "p", type: "gcp_vertex_gemini", modelName: "m", credential, extraBody: [], extraHeaders: [], timeouts: {}, settings: {}
    })
    const fromRequest = (credential: Credential, credentials: Record<string, string>) => {
      const call = providerCall(undefined, "m", provider(credential), { name: "v", extraBody: [], extraHeaders: [] }, { bodyEdits: [], headerEdits: [], credentials })
      return "credentialFromRequest" in call ? call.credentialFromRequest : call
    }
    expect(fromRequest({ kind: "static", value: "k" }, { k: "k" })).toBe(false)
    expect(fromRequest({ kind: "dynamic", name: "k" }, { k: "v" })).toBe(true)
    const fallback: Credential = { kind: "fallback", primary: { kind: "dynamic", name: "k" }, fallback: { kind: "static", value: "own" } }
    expect(fromRequest(fallback, { k: "v" })).toBe(true)
    expect(fromRequest(fallback, {})).toBe(false)
  })
})
