/**
 * The cache's scope (src/cache/policy.ts `cacheSharing`, issue 39): a key's own entries unless
 * `share_across_api_keys`, which shares within one workspace only; `default` keeps the scope
 * (none) its entries had before workspaces.
 */
import { describe, expect, it } from "vitest"
import { cacheSharing } from "../../src/cache/policy.ts"

const gateway = (auth: boolean, shared: boolean) => ({
  auth: { enabled: auth } as never,
  cache: { shareAcrossApiKeys: shared, lookupTimeoutMs: 250, backend: "auto", valkeyTtlS: 60 } as const
})

describe("cacheSharing", () => {
  it("keeps a key's entries its own while they are not shared, in any workspace", () => {
    expect(cacheSharing(gateway(true, false), "key1", "team-a")).toEqual({ scope: "key1", lookupTimeoutMs: 250 })
    expect(cacheSharing(gateway(true, false), "key1", "default").scope).toBe("key1")
  })

  it("shares within the workspace: none in default (the entries made before workspaces), its name elsewhere", () => {
    for (const auth of [true, false]) {
      expect(cacheSharing(gateway(auth, true), "key1", "default").scope).toBeUndefined()
      expect(cacheSharing(gateway(auth, true), "key1", "team-a").scope).toBe("workspace:team-a")
      expect(cacheSharing(gateway(auth, true), "key2", "team-a").scope).toBe("workspace:team-a")
      expect(cacheSharing(gateway(auth, true), "key1", "team-b").scope).toBe("workspace:team-b")
    }
    // authentication off: no key, the header's workspace
    expect(cacheSharing(gateway(false, false), undefined, "team-a").scope).toBe("workspace:team-a")
  })
})
