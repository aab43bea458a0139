import { describe, expect, it } from "vitest"
import { redactSecrets } from "../../src/providers/redact.ts"

describe("redactSecrets: a provider's error message without the call's credential", () => {
  it("removes every occurrence of the call's API key, whatever it looks like", () => {
    expect(redactSecrets("key tz-secret-1 is invalid (tz-secret-1)", "tz-secret-1")).toBe("key [REDACTED] is invalid ([REDACTED])")
    expect(redactSecrets("{\"error\":{\"message\":\"bad key: plainwordkey\"}}", "plainwordkey"))
      .toBe("{\"error\":{\"message\":\"bad key: [REDACTED]\"}}")
  })

  it("removes bearer tokens and sk- keys even when they are not the call's key", () => {
    expect(redactSecrets("Incorrect API key provided: Bearer sk-proj-abcDEF123456. See docs.", undefined))
      .toBe("Incorrect API key provided: Bearer [REDACTED]. See docs.")
    expect(redactSecrets("Authorization: bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl==", "other-key"))
      .toBe("Authorization: bearer [REDACTED]")
    expect(redactSecrets("You passed sk-ant-api03-AbCdEfGh_123 and sk-live_0123456789", undefined))
      .toBe("You passed [REDACTED] and [REDACTED]")
  })

  it("leaves prose and short keys alone", () => {
    const prose = "A bearer token is required; see https://example.com/task-management for the Bearer authentication scheme."
    expect(redactSecrets(prose, undefined)).toBe(prose)
    expect(redactSecrets("HTTP 401: unauthorized", "1")).toBe("HTTP 401: unauthorized")
    expect(redactSecrets("skip sk-short", undefined)).toBe("skip sk-short")
  })

  it("is idempotent", () => {
    const once = redactSecrets("Bearer abc-123-def-456 and abc-123-def-456", "abc-123-def-456")
    expect(once).toBe("Bearer [REDACTED] and [REDACTED]")
    expect(redactSecrets(once, "abc-123-def-456")).toBe(once)
  })
})
