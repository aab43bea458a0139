/**
 * A key imported from TensorZero has a mixed-case public id: wherever a user names a key by its
 * public id (disabling it, a rate limit or budget scope, a spend read), that id is accepted as
 * written and matched case-sensitively.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { checkPublicId } from "../../src/auth/keyAdministration.ts"
import { parseSpendParams } from "../../src/budgets/spendRead.ts"
import { scopeConditions } from "../../src/config/rateLimitRules.ts"
import { holds } from "../../src/ratelimit/rules.ts"

const imported = "AbCdEf012345"

describe("an imported key's mixed-case public id", () => {
  it("names a key to disable", () => {
    expect(Result.getOrThrow(checkPublicId(imported))).toBe(imported)
    expect(Result.isFailure(checkPublicId("AbCdEf01234"))).toBe(true)
    expect(Result.isFailure(checkPublicId("AbCdEf01234-"))).toBe(true)
  })

  it("scopes a rate limit rule to that key only, case-sensitively", () => {
    expect(scopeConditions([{ api_key_public_id: imported }])).toEqual([{ kind: "api_key", publicId: imported }])
    const condition = { kind: "api_key", publicId: imported } as const
    expect(holds(condition, { publicId: imported, workspace: "default", tags: {} })).toBe(true)
    expect(holds(condition, { publicId: imported.toLowerCase(), workspace: "default", tags: {} })).toBe(false)
  })

  it("reads the spend of that key", () => {
    const query = Result.getOrThrow(parseSpendParams("default", { api_key: imported }, Date.UTC(2026, 5, 1)))
    expect(query.scope).toEqual({ kind: "api_key", publicId: imported })
  })
})
