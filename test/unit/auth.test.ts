import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { generateApiKey, parseApiKey, secretMatches } from "../../src/auth/apiKey.ts"
import { checkAuthorization } from "../../src/auth/authenticate.ts"
import { FailedAttempts } from "../../src/auth/failedAttempts.ts"
import type { SessionPrincipal } from "../../src/auth/sessionStore.ts"
import type { ApiKeyInfo, StoredApiKey } from "../../src/auth/store.ts"
import { checkSession, csrfMatches, csrfTokenOf, hashSessionId, newSessionId } from "../../src/auth/uiSessions.ts"
import { ServiceUnavailable, Unauthorized } from "../../src/errors.ts"
import { StoreError } from "../../src/storeError.ts"

describe("API keys", () => {
  it("are sk-gw-<12-character public id>-<48-character secret>, different every time", () => {
    const a = generateApiKey()
    const b = generateApiKey()
    expect(a.key).toMatch(/^sk-gw-[a-z0-9]{12}-[A-Za-z0-9]{48}$/)
    expect(a.key).not.toBe(b.key)
    const parsed = parseApiKey(a.key)!
    expect(parsed.publicId).toBe(a.publicId)
    expect(secretMatches(parsed.secret, a.secretHash)).toBe(true)
    expect(secretMatches(parseApiKey(b.key)!.secret, a.secretHash)).toBe(false)
    // the stored hash is not the secret
    expect(Buffer.from(a.secretHash).toString("utf8")).not.toContain(parsed.secret)
  })

  it("name their issuer: sk-gw- this gateway, sk-t0- TensorZero, whose public ids are mixed-case and kept as written", () => {
    const secret = "Ab3".repeat(16)
    expect(parseApiKey(`sk-t0-AbCdEf012345-${secret}`)).toEqual({ issuer: "tensorzero", publicId: "AbCdEf012345", secret })
    expect(parseApiKey(`sk-t0-abcdef012345-${secret}`)).toEqual({ issuer: "tensorzero", publicId: "abcdef012345", secret })
    expect(parseApiKey(`sk-gw-abcdef012345-${secret}`)).toEqual({ issuer: "gateway", publicId: "abcdef012345", secret })
    expect(parseApiKey(generateApiKey().key)?.issuer).toBe("gateway")
  })

  it("refuse TensorZero keys of the wrong shape as malformed", () => {
    for (const text of [`sk-t0-AbCdEf01234-${"b".repeat(48)}`, `sk-t0-AbCdEf0123456-${"b".repeat(48)}`, `sk-t0-AbCdEf01234_-${"b".repeat(48)}`,
      `sk-t0-AbCdEf012345-${"b".repeat(47)}`, `sk-t0-AbCdEf012345-${"b".repeat(49)}`, `SK-T0-AbCdEf012345-${"b".repeat(48)}`, `sk-t0-AbCdEf012345-${"b".repeat(47)}-`]) {
      expect(parseApiKey(text)).toBeUndefined()
    }
  })

  it("refuse anything else as malformed", () => {
    for (const text of ["", "sk-gw-", "sk-gw-abc-def", `sk-gw-${"a".repeat(12)}-${"b".repeat(47)}`, `sk-xx-${"a".repeat(12)}-${"b".repeat(48)}`, `sk-gw-${"A".repeat(12)}-${"b".repeat(48)}`]) {
      expect(parseApiKey(text)).toBeUndefined()
    }
  })
})

describe("checkAuthorization", () => {
  const key = generateApiKey()
  const now = Date.now()
  const stored = (extra: Partial<StoredApiKey> = {}): StoredApiKey => ({ publicId: key.publicId, secretHash: key.secretHash, createdAt: now, admin: false, workspace: "default", global: false, issuer: "gateway", ...extra })
  /** `found` null: no such key */
  const check = (header: string | undefined, found: StoredApiKey | null | StoreError = stored()) =>
    Effect.runPromise(Effect.result(checkAuthorization(
      header,
      () => (found instanceof StoreError ? Effect.fail(found) : Effect.succeed(found ?? undefined)),
      now
    )))
  const messageOf = async (header: string | undefined, found: StoredApiKey | null | StoreError) => {
    const result = await check(header, found)
    expect(result._tag).toBe("Failure")
    return (result as any).failure as Unauthorized | ServiceUnavailable
  }

  it("accepts a valid key, answering the key with its workspace and role", async () => {
    const result = await check(`Bearer ${key.key}`, stored({ workspace: "team-a", admin: true }))
    expect((result as any).success).toMatchObject({ publicId: key.publicId, workspace: "team-a", admin: true, global: false })
  })

  it("has its own message for each way to fail, never repeating the secret", async () => {
    const secret = parseApiKey(key.key)!.secret
    const cases: Array<[string | undefined, StoredApiKey | null, string]> = [
      [undefined, stored(), `missing API key: send the header "Authorization: Bearer <API key>"`],
      [`Basic ${key.key}`, stored(), `the Authorization header must be "Bearer <API key>"`],
      ["Bearer not-a-key", stored(), "malformed API key: expected sk-gw-<12-character public id>-<secret>"],
      [`Bearer ${key.key}`, null, "unknown API key"],
      [`Bearer sk-gw-${key.publicId}-${"x".repeat(48)}`, stored(), "unknown API key"],
      [`Bearer ${key.key}`, stored({ disabledAt: now - 1 }), `API key ${key.publicId} is disabled`],
      [`Bearer ${key.key}`, stored({ expiresAt: now - 1 }), `API key ${key.publicId} expired at ${new Date(now - 1).toISOString()}`]
    ]
    for (const [header, found, message] of cases) {
      const failure = await messageOf(header, found)
      expect(failure).toBeInstanceOf(Unauthorized)
      expect(failure.message).toBe(message)
      expect(failure.message).not.toContain(secret)
    }
  })

  it("lets a key in only with its issuer's prefix", async () => {
    const secret = parseApiKey(key.key)!.secret
    const imported = stored({ issuer: "tensorzero" })
    expect((await check(`Bearer sk-t0-${key.publicId}-${secret}`, imported) as any).success).toMatchObject({ publicId: key.publicId, issuer: "tensorzero" })
    expect((await messageOf(`Bearer ${key.key}`, imported)).message).toBe("unknown API key")
    expect((await messageOf(`Bearer sk-t0-${key.publicId}-${secret}`, stored())).message).toBe("unknown API key")
  })

  it("answers 503 when the key store does not answer", async () => {
    const failure = await messageOf(`Bearer ${key.key}`, new StoreError({ message: "connect ECONNREFUSED" }))
    expect(failure).toBeInstanceOf(ServiceUnavailable)
  })
})

describe("FailedAttempts", () => {
  it("holds `perMinute` attempts per address, refilled continuously, given back after a success, never above the limit", () => {
    const attempts = new FailedAttempts(6)
    for (let i = 0; i < 6; i++) expect(attempts.take("a", 0)).toBe(true)
    expect(attempts.take("a", 0)).toBe(false)
    // one every 10 s
    expect(attempts.retryAfterS("a", 0)).toBe(10)
    expect(attempts.take("a", 9_000)).toBe(false)
    expect(attempts.retryAfterS("a", 9_000)).toBe(1)
    expect(attempts.take("a", 10_000)).toBe(true)
    expect(attempts.take("a", 10_000)).toBe(false)
    attempts.giveBack("a", 10_000)
    expect(attempts.take("a", 10_000)).toBe(true)
    // another address has its own; a full address is forgotten
    expect(attempts.take("b", 10_000)).toBe(true)
    attempts.giveBack("b", 10_000)
    expect(attempts.size).toBe(1)
  })

  it("tracks a bounded number of addresses, forgetting the one used longest ago", () => {
    const attempts = new FailedAttempts(1, 3)
    for (const address of ["a", "b", "c"]) attempts.take(address, 0)
    // "a" used again: "b" is now the oldest
    attempts.take("a", 0)
    attempts.take("d", 0)
    expect(attempts.size).toBe(3)
    expect(attempts.take("a", 0)).toBe(false)
    expect(attempts.take("b", 0)).toBe(true)
  })
})

describe("the UI's sessions", () => {
  const now = Date.now()
  const adminKey: ApiKeyInfo = { publicId: "admin0000001", createdAt: now, admin: true, workspace: "default", global: false, issuer: "gateway" }
  /** a store holding `sessions` (by the hex of their id's hash), counting its lookups */
  const storeOf = (sessions: Record<string, ApiKeyInfo> | StoreError) => {
    const store = {
      lookups: 0,
      create: () => Effect.void,
      find: (idHash: Uint8Array) =>
        Effect.suspend(() => {
          store.lookups++
          if (sessions instanceof StoreError) return Effect.fail(sessions)
          const key = sessions[Buffer.from(idHash).toString("hex")]
          return Effect.succeed(key === undefined ? undefined : { kind: "key" as const, key })
        }),
      delete: () => Effect.void,
      saveLogin: () => Effect.void,
      takeLogin: () => Effect.succeed(undefined)
    }
    return store
  }
  const hex = (sessionId: string) => Buffer.from(hashSessionId(sessionId)).toString("hex")
  const outcome = async (effect: Effect.Effect<SessionPrincipal, unknown>) => {
    const result = await Effect.runPromise(Effect.result(effect))
    return result._tag === "Success" ? (result.success.kind === "key" ? result.success.key : result.success) : (result.failure as { _tag: string; message: string })
  }

  it("ids are 32 random bytes; only their hash is looked up; the CSRF token is bound to the id", () => {
    const [a, b] = [newSessionId(), newSessionId()]
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(a).not.toBe(b)
    expect(Buffer.from(hashSessionId(a)).toString("base64url")).not.toBe(a)
    expect(csrfTokenOf(a)).not.toBe(csrfTokenOf(b))
    expect(csrfMatches(csrfTokenOf(a), a)).toBe(true)
    for (const sent of [csrfTokenOf(b), "", undefined, csrfTokenOf(a).slice(1)]) expect(csrfMatches(sent, a)).toBe(false)
  })

  it("answers a live session's key; refuses an ended one and a disabled or expired key", async () => {
    const [live, ofDisabled, ofExpired] = [newSessionId(), newSessionId(), newSessionId()]
    const store = storeOf({
      [hex(live)]: adminKey,
      [hex(ofDisabled)]: { ...adminKey, disabledAt: now - 1 },
      [hex(ofExpired)]: { ...adminKey, expiresAt: now - 1 }
    })
    expect(await outcome(checkSession(live, "a", store, undefined, now))).toEqual(adminKey)
    expect(await outcome(checkSession(newSessionId(), "a", store, undefined, now))).toMatchObject({
      _tag: "Unauthorized",
      message: "the UI's session has ended (signed out, expired, or unknown): sign in again"
    })
    expect(await outcome(checkSession(ofDisabled, "a", store, undefined, now))).toMatchObject({ message: "API key admin0000001 is disabled" })
    expect(await outcome(checkSession(ofExpired, "a", store, undefined, now))).toMatchObject({ message: expect.stringContaining("expired at") })
  })

  it("refuses a malformed cookie (a raw key) without a lookup or an attempt; counts unknown ids, then 429s before the lookup", async () => {
    const live = newSessionId()
    const store = storeOf({ [hex(live)]: adminKey })
    const attempts = new FailedAttempts(2)
    const rawKey = generateApiKey().key
    expect(await outcome(checkSession(rawKey, "a", store, attempts, now))).toMatchObject({ _tag: "Unauthorized", message: expect.stringContaining("not a session of this gateway") })
    expect(store.lookups).toBe(0)
    // a valid session takes nothing
    await outcome(checkSession(live, "a", store, attempts, now))
    await outcome(checkSession(live, "a", store, attempts, now))
    for (let i = 0; i < 2; i++) expect(await outcome(checkSession(newSessionId(), "a", store, attempts, now))).toMatchObject({ _tag: "Unauthorized" })
    const lookups = store.lookups
    expect(await outcome(checkSession(newSessionId(), "a", store, attempts, now))).toMatchObject({ _tag: "RateLimited" })
    expect(store.lookups).toBe(lookups)
    // another address is not affected
    expect(await outcome(checkSession(live, "b", store, attempts, now))).toEqual(adminKey)
  })

  it("a database that fails is a 503 and costs the address nothing", async () => {
    const attempts = new FailedAttempts(1)
    const failing = storeOf(new StoreError({ message: "connection refused" }))
    for (let i = 0; i < 3; i++) {
      expect(await outcome(checkSession(newSessionId(), "a", failing, attempts, now))).toMatchObject({
        _tag: "ServiceUnavailable",
        message: "cannot check the UI's session: the relational database is unavailable: connection refused"
      })
    }
    expect(attempts.take("a", now)).toBe(true)
  })
})
